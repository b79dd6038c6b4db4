"""The shipped scenario suites: experiment files (TOML) read as package data by `experiments.experiment`."""
