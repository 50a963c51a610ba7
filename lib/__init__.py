"""Not a package: ``lib/`` is the source root of the package ``posteval`` (``lib/posteval/``).

Importing ``lib`` from the repository root would give every module a second identity
(``lib.posteval.metrics`` beside ``posteval.metrics``); this file makes that an error.
"""

raise ImportError("'lib' is the source folder of the package 'posteval': use 'import posteval' "
                  "(installed by 'pip install -e .' or 'make setup')")
