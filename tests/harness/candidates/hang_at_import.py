"""Hangs while being imported (a build that never ends)."""

import time

while True:
    time.sleep(1)
