"""People in the owner's life: who they are to the owner, what they are called, how familiar.

A person has a name and aliases ("Ana", "my sister", "安娜"): any of them names them, in
recall as in the registry, so two people never share a name (the second is refused, and
a merge is the way to say they are one). Familiarity grows with each mention (a message
of the day naming them, counted by the dream) and decays without one (domain/person.py).

The dream proposes people and merges (from the model's answer, or offline from explicit
words: "my sister Ana", "我姐姐安娜"); the owner approves or rejects them. Approving a
merge folds the other person into the survivor: their names become aliases, their memories
are re-pointed, the familiarities combine, and their row points at the survivor.

- ``names``: how names are compared and found in text (the registry and recall).
- ``registry``: the people themselves, their memories and their mentions, and merges.
- ``proposals``: what the dream or an agent asks of the owner, and the owner's decisions.
- ``extract``: people named in explicit words, in English and Chinese (the offline dream).
- ``stars``: the people as stars of the star map.
"""
