"""Faults caused for real: crashes, hostile input and clients, servers that stop, move or refuse."""
