// Package version is the project's one version number: the library's
// (pig_version, the engine-version of snapshot summaries, the created_by of
// files) and, read from the same file by pyproject.toml and build.sh, the
// wheel's and the Python package's.
package version

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var raw string

// Version is the release, e.g. "0.1.0".
var Version = strings.TrimSpace(raw)

// EngineName is written as engine-name in snapshot summaries (with Version
// as engine-version) and, with Version, as the created_by of files.
const EngineName = "pyiceberg-go"
