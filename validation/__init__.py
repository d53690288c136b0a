"""archsim's validation suite: real kernels, their archsim descriptions, measurements and reports.

``python -m validation measure`` times the kernels on this machine (GPU or CPU) and writes
measurements with provenance under ``validation/data/<device>/``; ``python -m validation report``
compares archsim's predictions with the committed measurements.
"""
