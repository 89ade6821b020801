package jvm

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/latscope/latscope/internal/jfr"
	"github.com/latscope/latscope/internal/jfr/churntest"
	"github.com/latscope/latscope/java"
)

// The service's Java sources (package latscopelab), embedded so that a
// latscope binary can build them anywhere a JDK is installed.
//
//go:embed java
var sources embed.FS

// PGJDBC is where Debian's libpostgresql-jdbc-java puts the driver.
const PGJDBC = "/usr/share/java/postgresql.jar"

// tools are the JDK commands and files the scenario runs with.
type tools struct {
	java, jcmd, jfr string
	classpath       string // the service's classes, the library's, the driver
	jfc             string // internal/jfr/latscope.jfc
	churnJFC        string // internal/jfr/churntest/churn.jfc: 1 ms execution samples
}

// findTools finds the JDK and the driver before anything starts.
func findTools(pgjar string) (*tools, error) {
	t := &tools{}
	var err error
	for _, c := range []struct {
		dst  *string
		name string
	}{{&t.java, "java"}, {&t.jcmd, "jcmd"}} {
		if *c.dst, err = jdkTool(c.name); err != nil {
			return nil, err
		}
	}
	if _, err := java.Javac(); err != nil {
		return nil, errNoJDK
	}
	if t.jfr, err = jfr.FindTool(); err != nil {
		return nil, errNoJDK
	}
	if pgjar == "" {
		pgjar = PGJDBC
	}
	if _, err := os.Stat(pgjar); err != nil {
		return nil, fmt.Errorf("the JVM lab needs PostgreSQL's JDBC driver at %s (Debian: apt-get install libpostgresql-jdbc-java): %w", pgjar, err)
	}
	t.classpath = pgjar
	return t, nil
}

// writeSettings writes the JFR settings files latscope embeds
// (internal/jfr/latscope.jfc, internal/jfr/churntest/churn.jfc) into dir, so a binary copied
// away from the source tree records with them too.
func writeSettings(t *tools, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	t.jfc, t.churnJFC = filepath.Join(dir, "latscope.jfc"), filepath.Join(dir, "churn.jfc")
	return errors.Join(os.WriteFile(t.jfc, jfr.LatscopeJFC, 0o644), os.WriteFile(t.churnJFC, churntest.JFC, 0o644))
}

// CheckTools says what the scenario lacks — a JDK's java, javac, jcmd and
// jfr, and pgjdbc at PGJDBC — without
// starting anything: nil when all are there.
func CheckTools() error {
	_, err := findTools("")
	return err
}

// jdkTool finds a JDK command on PATH or in $JAVA_HOME/bin.
func jdkTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", name)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errNoJDK
}

// build compiles the io.latscope library (package java) and the service
// into dir and puts both on the class path.
func build(ctx context.Context, t *tools, dir string) error {
	if err := writeSettings(t, filepath.Join(dir, "jfc")); err != nil {
		return fmt.Errorf("write the JFR settings: %w", err)
	}
	lib := filepath.Join(dir, "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		return err
	}
	libClasses, err := java.Build(ctx, java.BuildOptions{Dir: lib})
	if err != nil {
		return fmt.Errorf("build the Java library: %w", err)
	}
	src := filepath.Join(dir, "service")
	if err := os.CopyFS(src, sources); err != nil {
		return fmt.Errorf("write the service's sources into %s: %w", src, err)
	}
	var files []string
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".java") {
			files = append(files, p)
		}
		return err
	})
	javac, err := java.Javac()
	if err != nil {
		return err
	}
	classes := filepath.Join(dir, "classes")
	cp := strings.Join([]string{libClasses, t.classpath}, string(os.PathListSeparator))
	args := append([]string{"-nowarn", "-d", classes, "-cp", cp}, files...)
	if out, err := exec.CommandContext(ctx, javac, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("javac the service: %w: %s", err, strings.TrimSpace(string(out)))
	}
	t.classpath = strings.Join([]string{classes, libClasses, t.classpath}, string(os.PathListSeparator))
	return nil
}
