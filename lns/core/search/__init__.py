"""The LNS search: its settings (:mod:`.config`), the starts (:mod:`.start`, :mod:`.warm_start`),
the loop (:mod:`.loop`), the incumbent, the selector protocol (:mod:`.selection`), neighborhood
sizes, stop rules, what a run returns (:mod:`.result`), its anytime metrics and progress lines."""
