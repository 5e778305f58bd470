"""Patch + workspace -> Plan: the update unit, the planner, the guards, approval."""
