"""Dynamic Resource Allocation: devices that pods request through ResourceClaims."""
