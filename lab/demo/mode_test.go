package demo

import (
	"flag"
	"strings"
	"testing"
)

func TestModeText(t *testing.T) {
	tests := []struct {
		in      string
		want    Mode
		wantErr bool
	}{
		{"serial", ModeSerial, false},
		{"concurrent", ModeConcurrent, false},
		{"fixed", ModeFixed, false},
		{"", 0, true},
		{"Serial", 0, true},
		{"parallel", 0, true},
		{" fixed", 0, true},
	}
	for _, tt := range tests {
		var m Mode
		err := m.UnmarshalText([]byte(tt.in))
		if (err != nil) != tt.wantErr {
			t.Errorf("UnmarshalText(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, "serial, concurrent, fixed") {
				t.Errorf("UnmarshalText(%q) error %q does not list the valid modes", tt.in, msg)
			}
			continue
		}
		if m != tt.want {
			t.Errorf("UnmarshalText(%q) = %v, want %v", tt.in, m, tt.want)
		}
		if text, err := m.MarshalText(); err != nil || string(text) != tt.in {
			t.Errorf("MarshalText(%v) = %q, %v; want %q", m, text, err, tt.in)
		}
	}
}

func TestModeString(t *testing.T) {
	tests := []struct {
		m    Mode
		want string
	}{
		{ModeSerial, "serial"},
		{ModeConcurrent, "concurrent"},
		{ModeFixed, "fixed"},
		{Mode(9), "Mode(9)"},
	}
	for _, tt := range tests {
		if got := tt.m.String(); got != tt.want {
			t.Errorf("Mode(%d).String() = %q, want %q", uint8(tt.m), got, tt.want)
		}
	}
	if _, err := Mode(9).MarshalText(); err == nil {
		t.Error("MarshalText(Mode(9)) succeeded")
	}
	if len(Modes()) != int(numModes) {
		t.Errorf("Modes() has %d modes, want %d", len(Modes()), numModes)
	}
}

func TestModeShapes(t *testing.T) {
	tests := []struct {
		m                  Mode
		overlaps, fixedSec bool
	}{
		{ModeSerial, false, false},
		{ModeConcurrent, true, false},
		{ModeFixed, true, true},
	}
	for _, tt := range tests {
		if tt.m.overlaps() != tt.overlaps || tt.m.fixedShared() != tt.fixedSec {
			t.Errorf("%v: overlaps %v fixedShared %v, want %v %v", tt.m, tt.m.overlaps(), tt.m.fixedShared(), tt.overlaps, tt.fixedSec)
		}
	}
}

func TestModeFlag(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	m := ModeSerial
	fs.Var(&m, "mode", "")
	if err := fs.Parse([]string{"--mode", "fixed"}); err != nil || m != ModeFixed {
		t.Fatalf("--mode fixed: mode %v, error %v", m, err)
	}
	err := fs.Parse([]string{"--mode", "bogus"})
	if err == nil || !strings.Contains(err.Error(), "-mode") || !strings.Contains(err.Error(), "valid: serial") {
		t.Errorf("--mode bogus: error %v, want one naming the flag and the valid modes", err)
	}
}

func FuzzModeUnmarshalText(f *testing.F) {
	for _, s := range []string{"serial", "concurrent", "fixed", "", "Fixed", "serial\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var m Mode
		if err := m.UnmarshalText([]byte(s)); err != nil {
			return
		}
		if m >= numModes || m.String() != s {
			t.Errorf("UnmarshalText(%q) = %v", s, m)
		}
	})
}
