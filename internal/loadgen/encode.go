package loadgen

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"time"
)

// An Encoder writes one Result.
type Encoder func(*Result) error

// Encode calls enc(r).
func (enc Encoder) Encode(r *Result) error { return enc(r) }

// NewJSONEncoder writes results as JSON lines: one object per line with the
// field names of Result's JSON tags, times in RFC 3339 with nanoseconds and
// the latency in integer nanoseconds.
func NewJSONEncoder(w io.Writer) Encoder {
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false)
	return func(r *Result) error { return e.Encode(r) }
}

// csvHeader names the columns of the CSV format, in order.
var csvHeader = []string{"seq", "client", "intended", "start", "latency_ns", "code", "error", "bytes_in", "warmup", "late", "dropped"}

// NewCSVEncoder writes results as CSV with a header row (written before the
// first result), the columns of csvHeader, and each row flushed to w.
func NewCSVEncoder(w io.Writer) Encoder {
	cw := csv.NewWriter(w)
	header := true
	return func(r *Result) error {
		if header {
			header = false
			if err := cw.Write(csvHeader); err != nil {
				return err
			}
		}
		if err := cw.Write(csvRecord(r)); err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	}
}

func csvRecord(r *Result) []string {
	return []string{
		strconv.FormatUint(r.Seq, 10),
		strconv.Itoa(r.Client),
		formatTime(r.Intended),
		formatTime(r.Start),
		strconv.FormatInt(int64(r.Latency), 10),
		strconv.Itoa(r.Code),
		r.Error,
		strconv.FormatInt(r.BytesIn, 10),
		strconv.FormatBool(r.Warmup),
		strconv.FormatBool(r.Late),
		strconv.FormatBool(r.Dropped),
	}
}

// formatTime writes t in RFC 3339 with nanoseconds; the zero time is empty.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}
