"""The feedback stage: runtime telemetry informs the compiler (retuning, rollback guard, report, sweeps)."""
