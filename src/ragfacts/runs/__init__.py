"""Making a run: `Evaluation` -> `RunResult` (`evaluation`), planned once for both engines (`planning`), judged in
this process (`runner`) or on Ray (`ray_engine`), into a run directory (`rundir`, `jsonl`, `manifest`)."""
