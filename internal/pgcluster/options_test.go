package pgcluster

import (
	"os"
	"strings"
	"testing"
)

func TestMergeSettings(t *testing.T) {
	tests := []struct {
		name  string
		extra map[string]string
		key   string
		want  string // "" = absent
		err   string
	}{
		{"default", nil, "log_destination", "jsonlog", ""},
		{"dir token", nil, "unix_socket_directories", "/c/sock", ""},
		{"override", map[string]string{"fsync": "on"}, "fsync", "on", ""},
		{"add", map[string]string{"work_mem": "8MB"}, "work_mem", "8MB", ""},
		{"delete", map[string]string{"deadlock_timeout": ""}, "deadlock_timeout", "", ""},
		{"port", map[string]string{"port": "5432"}, "", "", "Options.Port"},
		{"bad name", map[string]string{"a b": "1"}, "", "", "bad setting name"},
		{"newline", map[string]string{"a": "1\nb = 2"}, "", "", "line break"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := mergeSettings(tt.extra, "/c")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m[tt.key]; got != tt.want {
				t.Errorf("%s = %q, want %q", tt.key, got, tt.want)
			}
		})
	}
	if DefaultSettings["unix_socket_directories"] != DirToken+"/sock" {
		t.Errorf("mergeSettings changed DefaultSettings: %v", DefaultSettings)
	}
}

func TestConfText(t *testing.T) {
	got := confText(map[string]string{"b": `it's`, "a": `C:\x`})
	want := "\n# added by latscope pgcluster\na = 'C:\\\\x'\nb = 'it''s'\n"
	if got != want {
		t.Errorf("confText = %q, want %q", got, want)
	}
}

func TestVersionKey(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"15", 15000}, {"9.6", 9006}, {"10", 10000}, {"x", -1}, {"1.x", -1}, {"", -1}, {"-1", -1},
	}
	for _, tt := range tests {
		if got := versionKey(tt.in); got != tt.want {
			t.Errorf("versionKey(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestJSONLogPath(t *testing.T) {
	tests := []struct {
		text, want, err string
	}{
		{"stderr log/a.log\njsonlog log/a.json\n", "/d/log/a.json", ""},
		{"jsonlog /abs/a.json", "/abs/a.json", ""},
		{"stderr log/a.log\n", "", "names no jsonlog"},
	}
	for _, tt := range tests {
		got, err := jsonlogPath("/d", "/d/current_logfiles", tt.text)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("jsonlogPath(%q) err = %v, want %q", tt.text, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("jsonlogPath(%q) = %q, %v; want %q", tt.text, got, err, tt.want)
		}
	}
}

func TestTail(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\n", 10, "a\nb"},
		{"aaaa\nbb\ncc\n", 6, "bb\ncc"},
		{"abcdef", 3, "def"},
		{"", 3, ""},
	}
	for _, tt := range tests {
		if got := tail([]byte(tt.in), tt.n); got != tt.want {
			t.Errorf("tail(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestPostmasterPID(t *testing.T) {
	dir := t.TempDir()
	if _, err := PostmasterPID(dir); err == nil || !strings.Contains(err.Error(), "postmaster.pid") {
		t.Errorf("no file: %v", err)
	}
	os.WriteFile(dir+"/postmaster.pid", []byte("4242\n/var/lib/pg\n"), 0o644)
	if pid, err := PostmasterPID(dir); err != nil || pid != 4242 {
		t.Errorf("PostmasterPID = %d, %v", pid, err)
	}
	os.WriteFile(dir+"/postmaster.pid", []byte("x\n"), 0o644)
	if _, err := PostmasterPID(dir); err == nil || !strings.Contains(err.Error(), "not a PID") {
		t.Errorf("bad file: %v", err)
	}
}
