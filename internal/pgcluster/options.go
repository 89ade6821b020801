package pgcluster

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Options configures a throwaway cluster. Zero values mean: auto-detect
// binaries, a fresh temp dir, a free port.
type Options struct {
	BinDir   string            // "" = auto-detect (see FindBinDir)
	Dir      string            // "" = a new os.MkdirTemp dir; the cluster owns and deletes it on Stop (must be absent or empty)
	Port     int               // 0 = pick a free 127.0.0.1 port (retried if another process takes it first)
	Settings map[string]string // extra/overriding postgresql.conf settings, merged over DefaultSettings; "" deletes a default
	Log      io.Writer         // receives initdb's output; nil = discarded (but included in errors)
}

// DirToken in a setting's value is replaced by the cluster directory.
const DirToken = "{dir}"

// DefaultSettings are written to postgresql.conf before Options.Settings.
// Treat it as read-only; Start copies it. The port is not a setting: it is
// passed on the postgres command line from Options.Port.
//
// Beyond fast throwaway operation (fsync off), they make every statement's
// duration and every lock wait land in one jsonlog file, with UTC timestamps
// and English messages, which is what package pglog reads.
var DefaultSettings = map[string]string{
	"listen_addresses":           "127.0.0.1",
	"unix_socket_directories":    DirToken + "/sock",
	"logging_collector":          "on",
	"log_destination":            "jsonlog",
	"log_directory":              "log",
	"log_rotation_age":           "0",
	"log_rotation_size":          "0",
	"log_timezone":               "UTC",
	"lc_messages":                "C",
	"log_min_duration_statement": "0",
	"log_lock_waits":             "on",
	"deadlock_timeout":           "100ms",
	"fsync":                      "off",
	"synchronous_commit":         "off",
	"full_page_writes":           "off",
	"max_connections":            "100",
}

// mergeSettings returns DefaultSettings overridden by extra, with DirToken
// expanded to dir. An empty value in extra removes the setting.
func mergeSettings(extra map[string]string, dir string) (map[string]string, error) {
	m := maps.Clone(DefaultSettings)
	for k, v := range extra {
		if err := checkSetting(k, v); err != nil {
			return nil, err
		}
		if v == "" {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	for k, v := range m {
		m[k] = strings.ReplaceAll(v, DirToken, dir)
	}
	return m, nil
}

// checkSetting rejects names and values that cannot be written as one
// postgresql.conf line, and the port, which belongs in Options.Port.
func checkSetting(k, v string) error {
	if k == "" || strings.ContainsAny(k, " \t\r\n=#'") {
		return fmt.Errorf("pgcluster: bad setting name %q", k)
	}
	if strings.EqualFold(k, "port") {
		return fmt.Errorf("pgcluster: setting %q: use Options.Port instead", k)
	}
	if strings.ContainsAny(v, "\r\n\x00") {
		return fmt.Errorf("pgcluster: setting %s: value contains a line break or NUL", k)
	}
	return nil
}

// confText renders settings as postgresql.conf lines in name order, each
// value single-quoted with ' doubled and \ escaped (PostgreSQL accepts
// quoted values for every type).
func confText(settings map[string]string) string {
	var b strings.Builder
	b.WriteString("\n# added by latscope pgcluster\n")
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		v := strings.ReplaceAll(settings[k], `\`, `\\`)
		v = strings.ReplaceAll(v, "'", "''")
		fmt.Fprintf(&b, "%s = '%s'\n", k, v)
	}
	return b.String()
}
