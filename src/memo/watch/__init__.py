"""The watcher driver: `memo watch` and `memo serve --watch` keep indexes fresh by themselves.

A driver, like the CLI and the servers: the core (collection, index, search, router) never
imports it.
"""

from .watcher import Watcher

__all__ = ["Watcher"]
