"""Package discovery only (metadata is in pyproject.toml).

The presets live in the top-level ``models/`` folder; a wheel ships them as ``archsim/_models`` so
an installed archsim finds them without a checkout.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["archsim*", "validation*"]), "archsim._models"],
    package_dir={"archsim._models": "models"},
)
