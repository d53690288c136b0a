"""Trace-driven microarchitecture simulators: caches, branch predictors, traces, a CPU core model.

Submodules are imported on demand (``from archsim.microarch.cache import ...``), so importing the
package compiles nothing.
"""
