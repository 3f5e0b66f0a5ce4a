"""The property phase: the change's accepted property files, and the seeds they ran with."""
