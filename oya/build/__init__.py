"""The build: its steps as plain functions the Dagster assets call, in order, and what a build may
write (its output folders, their lock, a killed build's leftovers, its progress and records)."""
