"""Many runs from one scenario: parameter sweeps and fault-schedule fuzzing, optionally on Spark."""
