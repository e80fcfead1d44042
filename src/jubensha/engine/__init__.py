"""The table: seats, the host's procedure, events and who sees them, voting, the outcome."""
