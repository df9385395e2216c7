"""The home's corpus turned into memories: backfill's four lanes and the retrospective distiller.

Not hooks (nothing here fires at a point of the loop): Hook E and the loop call into it, and
so does `executive mem backfill`. It reads the workspace and writes through the harvester.
"""
