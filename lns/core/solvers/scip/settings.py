"""Named SCIP settings for the LNS sub-problems (``SubSolveParams.sub_mip``).

SCIP's own LNS heuristics (RINS, RENS, ALNS, ...) solve their sub-MIPs with fast presolving,
fast separation and no sub-MIP heuristics of their own: a sub-problem is solved many times,
briefly, and most of SCIP's root effort pays off only on long solves. The presets here are the
parameter values of SCIP's ``FAST`` presolving and separation settings
(``SCIPsetPresolving``/``SCIPsetSeparating``, SCIP 10), as plain dictionaries so that they are
visible and can be changed one by one; ``lns-bench +experiment=sub_mip`` measures them.
"""

from __future__ import annotations

#: ``SCIPsetPresolving(scip, SCIP_PARAMSETTING_FAST)``: no restarts, no pairwise or expensive
#: presolvers.
FAST_PRESOLVING = {
    "presolving/maxrestarts": 0,
    "constraints/linear/presolpairwise": False,
    "constraints/and/presolpairwise": False,
    "constraints/cumulative/presolpairwise": False,
    "constraints/knapsack/presolpairwise": False,
    "constraints/logicor/presolpairwise": False,
    "constraints/logicor/implications": False,
    "constraints/setppc/presolpairwise": False,
    "constraints/varbound/presolpairwise": False,
    "constraints/xor/presolpairwise": False,
    "constraints/components/maxprerounds": 0,
    "presolving/gateextraction/maxrounds": 0,
    "presolving/domcol/maxrounds": 0,
    "presolving/sparsify/maxrounds": 0,
    "presolving/dualsparsify/maxrounds": 0,
    "propagating/probing/maxprerounds": 0,
}
#: ``SCIPsetSeparating(scip, SCIP_PARAMSETTING_FAST)``: fewer cut rounds at the root.
FAST_SEPARATING = {
    "separating/maxbounddist": 0.0,
    "constraints/and/sepafreq": 0,
    "separating/gomory/maxroundsroot": 20,
    "separating/aggregation/maxroundsroot": 5,
    "separating/aggregation/maxtriesroot": 100,
    "separating/aggregation/maxaggrsroot": 3,
    "separating/aggregation/maxsepacutsroot": 200,
    "separating/zerohalf/maxroundsroot": 5,
    "separating/zerohalf/maxsepacutsroot": 200,
    "separating/mcf/freq": -1,
}
#: SCIP's large neighborhood heuristics, which would solve sub-MIPs of the sub-MIP.
SUB_MIP_HEURISTICS_OFF = {
    f"heuristics/{name}/freq": -1
    for name in (
        "rens", "rins", "alns", "gins", "crossover", "dins", "mutation", "localbranching",
        "proximity", "lpface", "undercover", "trustregion",
    )
}  # fmt: skip

#: ``SubSolveParams.sub_mip`` names: SCIP parameters set on the LNS sub-solver's model.
SUB_MIP_SETTINGS: dict[str, dict] = {
    "default": {},
    "fast_presolving": FAST_PRESOLVING,
    "fast": {**FAST_PRESOLVING, **FAST_SEPARATING, **SUB_MIP_HEURISTICS_OFF},
}
