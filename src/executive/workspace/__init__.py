"""The workspace: goal bundles, their lifecycle folders, the work ledger and needs-you."""
