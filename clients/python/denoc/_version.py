"""The package's version: the project's (project(denoc VERSION ...) in the top-level CMakeLists.txt; the
test packaging_versions checks that the two agree)."""

__version__ = "0.2.0"
