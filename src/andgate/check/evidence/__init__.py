"""Approval evidence: what an edit of oracle items gives up (contract section 6)."""
