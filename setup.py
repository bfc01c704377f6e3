"""Which packages the wheel holds; the rest of the build configuration is in pyproject.toml.

Found, not listed, so a new folder under ``app/`` or ``resources/`` is installed by
construction. ``[tool.setuptools.packages.find]`` cannot do this alone: it names a
package after its folder, and ``resources/`` is installed as ``autograd_lens_resources``
(the name ``app/core/resources.py`` looks for; a top-level ``resources`` would clash
with other projects, and a symlink giving the folder that name is lost in the sdist,
so a wheel built from it had no resources).
"""

from setuptools import find_namespace_packages, setup

RESOURCES = "autograd_lens_resources"
NOT_PACKAGES = ["__pycache__", "*.__pycache__"]

setup(
    packages=[
        *find_namespace_packages(include=["app", "app.*"], exclude=NOT_PACKAGES),
        RESOURCES,
        *(f"{RESOURCES}.{name}" for name in find_namespace_packages("resources", exclude=NOT_PACKAGES)),
    ]
)
