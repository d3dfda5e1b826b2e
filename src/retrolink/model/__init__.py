"""The machine model: a machine file read and checked (machine), the declared
parameters (schema), units, and the generated parameter tables (describe)."""
