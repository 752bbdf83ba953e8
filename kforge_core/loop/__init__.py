"""The agent loop: a run's plan, its steps, budget, journal and progress, and the loop itself."""
