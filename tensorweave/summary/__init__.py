"""L4 observability: step timelines (timeline.py); TensorBoard summaries and event files later."""
