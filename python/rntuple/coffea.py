"""coffea's NanoEvents read through rntuple: an RNTuple as the column source of ``NanoEventsFactory.from_preloaded``.

coffea opens files with uproot; this module hands it the columns instead, read by rntuple: each top-level field as
an awkward array (virtual by default: a field is read when the analysis first touches it, so only the
collections used are read, as coffea's own virtual mode does).

>>> from rntuple.coffea import nanoevents
>>> events = nanoevents("nano.root", "Events")                  # NanoAODSchema, virtual
>>> dimuons = events[ak.num(events.Muon) == 2]
>>> mass = (dimuons.Muon[:, 0] + dimuons.Muon[:, 1]).mass

Or build the source and call coffea yourself (any schema, its options)::

    source = rntuple.coffea.array_source("nano.root", "Events")
    events = NanoEventsFactory.from_preloaded(source, schemaclass=NanoAODSchema).events()

coffea is not a dependency of rntuple: install it to use this module (``pip install coffea``).
"""

from ._engines.coffea import ArraySource, array_source, nanoevents

__all__ = ["ArraySource", "array_source", "nanoevents"]
