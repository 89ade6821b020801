// Package java holds latscope's Java library, io.latscope (sources in
// java/src, plain JDK 17, no dependencies), and builds it. The library marks
// requests and their hand-offs to executors with JFR events that
// `latscope analyze rec.jfr` reads (docs/jfr.md): latscope.Request,
// latscope.TaskSubmit, latscope.TaskRun and latscope.TaskWait.
//
// The sources are embedded, so a latscope binary can build the library
// anywhere a JDK is installed (Build). By hand, from the repository's top:
//
//	javac -d java/out $(find java/src -name '*.java') && jar cf latscope-jfr.jar -C java/out .
//
// The Servlet filter (io.latscope.servlet.LatscopeFilter, in java/servlet)
// needs a javax.servlet API jar and is built only when one is given.
package java

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
)

//go:embed src servlet
var sources embed.FS

// BuildCommand is the one-line command that builds the library by hand,
// from the repository's top (docs/jfr.md).
const BuildCommand = "javac -d java/out $(find java/src -name '*.java') && jar cf latscope-jfr.jar -C java/out ."

// ErrNoJavac is wrapped by Build's error when no javac is found.
var ErrNoJavac = errors.New("javac not found on PATH or in $JAVA_HOME/bin (Debian: apt-get install openjdk-17-jdk-headless)")

// BuildOptions say where and how to build.
type BuildOptions struct {
	// Dir receives the sources (Dir/src, Dir/servlet) and the classes
	// (Dir/classes); it must exist.
	Dir string
	// Javac is the javac command; "" finds it on PATH or in $JAVA_HOME/bin.
	Javac string
	// ServletJar, when set, is a javax.servlet API jar
	// (/usr/share/java/servlet-api.jar): the Servlet filter is built too.
	ServletJar string
}

// Build compiles the library and returns the directory of its classes, for
// a JVM's -cp.
func Build(ctx context.Context, o BuildOptions) (string, error) {
	javac := o.Javac
	if javac == "" {
		var err error
		if javac, err = Javac(); err != nil {
			return "", err
		}
	}
	if err := os.CopyFS(o.Dir, sources); err != nil {
		return "", fmt.Errorf("java: write sources into %s: %w", o.Dir, err)
	}
	classes := filepath.Join(o.Dir, "classes")
	if err := compile(ctx, javac, classes, "", filepath.Join(o.Dir, "src")); err != nil {
		return "", err
	}
	if o.ServletJar != "" {
		if err := compile(ctx, javac, classes, o.ServletJar, filepath.Join(o.Dir, "servlet")); err != nil {
			return "", fmt.Errorf("%w (servlet API jar %s)", err, o.ServletJar)
		}
	}
	return classes, nil
}

func compile(ctx context.Context, javac, classes, jar, dir string) error {
	files, err := javaFiles(dir)
	if err != nil {
		return err
	}
	cp := classes
	if jar != "" {
		cp += string(os.PathListSeparator) + jar
	}
	args := append([]string{"-nowarn", "-d", classes, "-cp", cp}, files...)
	if out, err := exec.CommandContext(ctx, javac, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("javac %s: %w: %s", dir, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func javaFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".java") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("java: %w", err)
	}
	return files, nil
}

// Javac finds javac on PATH or in $JAVA_HOME/bin.
func Javac() (string, error) {
	if p, err := exec.LookPath("javac"); err == nil {
		return p, nil
	}
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", "javac")
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", ErrNoJavac
}
