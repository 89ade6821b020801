package dbwait

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/latscope/latscope/internal/dbwait"
	"github.com/latscope/latscope/internal/units"
	"github.com/latscope/latscope/lab"
)

// A kept fault-suite run is everything the suite's analysis and scoring
// need, without a server: per run of a condition the service's execution
// trace, its part of the server log, the database host's recording and,
// with the proxy, the proxy's own log (each gzipped), and in KeptFile the fault spans as the lab placed them on
// the trace's clock (the ground truth), the threshold, how many CPU
// burners ran (whether the lab loaded the host) and the numbers of the lab's
// own instruments (window, process CPU, pause). rescoreKept judges and
// scores it with the live suite's code: judge, fill, aggregate,
// faultsOutcome. TestKeepFaults records one (docs/dbwait.md).

// KeptFile is the kept run's metadata, in its folder.
const KeptFile = "run.json"

// keptSuite is KeptFile.
type keptSuite struct {
	// Recorded is when the run ended (UTC); Host what the machine was:
	// CPUs, the load average before the run and after it. Both are for
	// the reader: the scoring does not read them.
	Recorded string `json:"recorded"`
	Host     string `json:"host"`
	// Profile, WindowMs and Runs are the lab profile's.
	Profile  string  `json:"profile"`
	WindowMs float64 `json:"window_ms"`
	Runs     int     `json:"runs"`
	// Burners is how many CPU burners the lab ran beside the suite (0:
	// the quiet half); the scoring takes a busy database host from it.
	Burners int `json:"burners"`
	// ThresholdMs is dbwait's threshold the run was judged with.
	ThresholdMs float64         `json:"threshold_ms"`
	Conditions  []keptCondition `json:"conditions"`
}

// keptCondition is one condition's runs.
type keptCondition struct {
	Name string        `json:"name"`
	Runs []keptRunMeta `json:"runs"`
}

// keptRunMeta is one run: its files (in the kept folder), the lab's own
// instruments and the fault spans.
type keptRunMeta struct {
	Run    string `json:"run"`
	Trace  string `json:"trace"`
	PGLog  string `json:"postgresql_log"`
	DBHost string `json:"dbhost"`
	// ProxyLog is the delaying proxy's own log (latscope-lab proxy --log),
	// when the condition had the proxy: the truth of the network's share.
	ProxyLog string      `json:"proxy_log,omitempty"`
	WindowMs float64     `json:"window_ms"`
	CPUMs    float64     `json:"process_cpu_ms"`
	PausedMs float64     `json:"paused_ms,omitempty"`
	Faults   []FaultSpan `json:"faults"`
}

// keepFaults keeps the fault suite's run res, whose files are in out (the
// lab's env.Out), in dir: the gzipped files and KeptFile. host describes
// the machine for the reader.
func keepFaults(dir, out string, env *lab.Env, res *FaultsResult, host string, at time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	k := keptSuite{Recorded: at.UTC().Format(time.RFC3339), Host: host, Profile: env.Profile.Name,
		WindowMs: units.Ms(env.Profile.Window), Runs: env.Profile.Runs, Burners: res.Burners}
	for _, c := range res.Conditions {
		kc := keptCondition{Name: c.Name}
		for _, rr := range c.Runs {
			if rr.res == nil {
				return fmt.Errorf("%s: not judged", rr.Run)
			}
			k.ThresholdMs = units.Ms(rr.res.Options.Threshold)
			m := keptRunMeta{Run: rr.Run, Trace: rr.Run + ".trace.gz", PGLog: rr.Run + ".postgresql.json.gz", DBHost: rr.Run + ".dbhost.txt.gz",
				WindowMs: rr.WindowMs, CPUMs: rr.CPUMs, PausedMs: rr.PausedMs, Faults: rr.Faults}
			files := map[string]string{rr.Trace: m.Trace, rr.PGLog: m.PGLog, rr.DBHost: m.DBHost}
			if rr.ProxyLog != "" {
				m.ProxyLog = rr.ProxyLog + ".gz"
				files[rr.ProxyLog] = m.ProxyLog
			}
			for from, to := range files {
				if err := gzipTo(filepath.Join(out, from), filepath.Join(dir, to)); err != nil {
					return err
				}
			}
			kc.Runs = append(kc.Runs, m)
		}
		k.Conditions = append(k.Conditions, kc)
	}
	b, err := json.MarshalIndent(k, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, KeptFile), append(b, '\n'), 0o644)
}

// gzipTo writes a gzip copy of from to to (no name or time in the header:
// the same file gives the same bytes).
func gzipTo(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(dst, gzip.BestCompression)
	_, err = io.Copy(zw, src)
	return errors.Join(err, zw.Close(), dst.Close())
}

// gunzipFile reads a gzipped file whole.
func gunzipFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// rescoreKept judges every run kept in dir again and scores the suite, as
// RunFaults does after its windows: the same judging (judge, with and
// without the database host's recording), the same aggregation and the
// same outcome (faultsOutcome), from the kept files alone. The lab
// environment is the kept run's: its profile and burners, and dir as the
// output folder the report names.
func rescoreKept(dir string) (*lab.Outcome, error) {
	b, err := os.ReadFile(filepath.Join(dir, KeptFile))
	if err != nil {
		return nil, err
	}
	var k keptSuite
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&k); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, KeptFile), err)
	}
	conds := map[string]Condition{}
	for _, c := range FaultConditions {
		conds[c.Name] = c
	}
	opts := dbwait.Options{Threshold: time.Duration(k.ThresholdMs * float64(time.Millisecond))}
	var results []*ConditionResult
	for _, kc := range k.Conditions {
		c, ok := conds[kc.Name]
		if !ok {
			return nil, fmt.Errorf("%s: condition %q is not one of the fault suite's", dir, kc.Name)
		}
		cr := &ConditionResult{Name: c.Name, Summary: c.Summary, cond: c}
		for _, m := range kc.Runs {
			if c.Delay > 0 && m.ProxyLog == "" {
				return nil, fmt.Errorf("%s: %s: no proxy log: the truth of the network's share is the proxy's own log since issue 34's third round; record the run again", dir, m.Run)
			}
			rr, err := rejudge(dir, m, opts)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", dir, m.Run, err)
			}
			cr.Runs = append(cr.Runs, rr)
		}
		cr.aggregate()
		results = append(results, cr)
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("%s: no condition kept", dir)
	}
	env := &lab.Env{Out: dir, Burners: k.Burners,
		Profile: lab.Profile{Name: k.Profile, Window: time.Duration(k.WindowMs * float64(time.Millisecond)), Runs: k.Runs}}
	return faultsOutcome(env, results)
}

// rejudge judges one kept run.
func rejudge(dir string, m keptRunMeta, opts dbwait.Options) (*RunResult, error) {
	trace, err := gunzipFile(filepath.Join(dir, m.Trace))
	if err != nil {
		return nil, err
	}
	pg, err := gunzipFile(filepath.Join(dir, m.PGLog))
	if err != nil {
		return nil, err
	}
	dbh, err := readDBHost(filepath.Join(dir, m.DBHost))
	if err != nil {
		return nil, err
	}
	j, err := judge(m.Trace, trace, m.PGLog, pg, dbh, opts)
	if err != nil {
		return nil, err
	}
	rr := &RunResult{Run: m.Run, Trace: m.Trace, PGLog: m.PGLog, DBHost: m.DBHost, WindowMs: m.WindowMs, CPUMs: m.CPUMs, PausedMs: m.PausedMs,
		Faults: m.Faults, trace: filepath.Join(dir, m.Trace), ProxyLog: m.ProxyLog}
	rr.take(j)
	if err := rr.truthFiles(filepath.Join(dir, m.ProxyLog), dbh); err != nil {
		return nil, err
	}
	return rr, nil
}
