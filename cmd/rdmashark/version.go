package main

import (
	"runtime/debug"
	"strings"
)

// versionString is rdmashark's version: the one set with -ldflags
// "-X main.version=..." if any, else the module version and the VCS
// revision (with "+dirty" for a modified work tree) the build recorded.
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	return versionFrom(version, bi, ok)
}

func versionFrom(set string, bi *debug.BuildInfo, ok bool) string {
	if set != "" && set != "dev" {
		return set
	}
	if !ok || bi == nil {
		return "(unknown: built without module information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	parts := []string{v}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "+dirty"
		}
		parts = append(parts, "revision "+rev)
	}
	if when != "" {
		parts = append(parts, when)
	}
	parts = append(parts, bi.GoVersion)
	return strings.Join(parts, ", ")
}
