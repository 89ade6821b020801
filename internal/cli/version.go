package cli

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// VersionSummary is the version command's line in the usage.
const VersionSummary = "print the binary's module version, VCS revision and Go version"

// Version is the version command: every binary registers it. It prints what the binary's build information says of itself:
// the module version ((devel) for a build from a work tree), the VCS
// revision and time when the go command stamped them, and the Go version.
func Version(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := NewFlagSet("version", "version", stderr)
	UsageWith(fs, stderr, "version", "\nexamples:\n  "+Name+" version\n")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Errorf("this binary carries no build information")
	}
	_, err := io.WriteString(stdout, versionText(bi))
	return err
}

// versionText formats build information as the version command prints it.
func versionText(bi *debug.BuildInfo) string {
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	rev := "unknown (built without VCS stamping: -buildvcs=false, or not from a git work tree)"
	if r := settings["vcs.revision"]; r != "" {
		rev = r
		if t := settings["vcs.time"]; t != "" {
			rev += " (" + t + ")"
		}
		if settings["vcs.modified"] == "true" {
			rev += ", with uncommitted changes"
		}
	}
	return fmt.Sprintf("%s %s\nmodule %s\nrevision %s\n%s\n", Name, version, bi.Main.Path, rev, bi.GoVersion)
}
