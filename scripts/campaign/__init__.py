"""The GPU campaign (scripts/gpu_campaign.py): its runner, context and steps."""
