"""The shapes a problem must hold at besides its own: declared by the problem (``get_input_variants()``) or
derived by KForge from the sizes it sees free (``derive.py``), and made into seeded inputs the same way in every
process (``inputs.py``). Verification judges them (``harness/shape_findings.py``); docs/verification.md, "Shapes",
says how."""
