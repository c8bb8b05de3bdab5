"""The commands of the `rig` CLI, one module each; rig/cli.py assembles them."""
