"""Problem instances: small bundled MIPLIB files and generators of problem distributions."""
