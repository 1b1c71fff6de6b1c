// Package klogtext reads the lines klog writes in its text format, the
// format every chapter logs in and kube-scheduler's default:
//
//	I1122 04:54:28.023422   21114 schedule_one.go:202] "Msg" pod="ns/p" node="n1" feasibleNodes=3 plugins=["A","B"]
//
// A structured call (logger.Info(msg, key, value, ...)) writes its message
// quoted, then its pairs: strings and the names klog.KObj gives quoted,
// numbers bare, slices and maps as JSON. The timeline, the trace tools and
// make watch all read the schedulers' logs through this one reader.
package klogtext

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Record is one structured line.
type Record struct {
	// Severity is the header's first letter: I, W, E or F.
	Severity byte
	// Time is the header's time. klog writes no year: Time has the year
	// the reader gives.
	Time time.Time
	// Source is file.go:line.
	Source string
	// Msg is the message, unquoted.
	Msg string
	// Fields holds the pairs after the message. A quoted value is
	// unquoted; any other (a number, a JSON slice or map) is kept as
	// written.
	Fields map[string]string
}

// header matches klog's text header, "I1122 04:54:28.023422   21114
// file.go:202] ", and captures the severity, the time, the source and the
// rest of the line.
var header = regexp.MustCompile(`^([IWEF])(\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ ([^ ]+)\] (.*)$`)

// Parse reads one line. ok is false for a line that is not a structured
// klog line: an unstructured message (not quoted), a continuation line, or
// anything else a process writes to stderr.
func Parse(line string, year int) (r Record, ok bool) {
	m := header.FindStringSubmatch(line)
	if m == nil {
		return r, false
	}
	at, err := time.ParseInLocation("0102 15:04:05.000000", m[2], time.Local)
	if err != nil {
		return r, false
	}
	msg, fields, ok := message(m[4])
	if !ok {
		return r, false
	}
	return Record{Severity: m[1][0], Time: at.AddDate(year, 0, 0), Source: m[3], Msg: msg, Fields: fields}, true
}

// message splits `"Msg" k="v" k2=v2` into the message and its fields.
func message(rest string) (string, map[string]string, bool) {
	if !strings.HasPrefix(rest, `"`) {
		return "", nil, false
	}
	quoted, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return "", nil, false
	}
	msg, _ := strconv.Unquote(quoted)
	fields := map[string]string{}
	rest = rest[len(quoted):]
	for {
		rest = strings.TrimLeft(rest, " ")
		eq := strings.IndexByte(rest, '=')
		if rest == "" || eq <= 0 {
			return msg, fields, true
		}
		// The key is everything up to "=": upstream has a key with a
		// space, "unschedulable plugins", and klog writes keys as they are.
		key := rest[:eq]
		value, n := value(rest[eq+1:])
		fields[key] = value
		rest = rest[eq+1+n:]
	}
}

// value reads the value at the start of s and returns it with the length
// it took: a quoted string (unquoted), a JSON array or object (balanced,
// strings inside skipped), or anything up to the next space.
func value(s string) (string, int) {
	switch {
	case strings.HasPrefix(s, `"`):
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			break
		}
		u, _ := strconv.Unquote(q)
		return u, len(q)
	case strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{"):
		dec := json.NewDecoder(strings.NewReader(s))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == nil {
			n := int(dec.InputOffset())
			return s[:n], n
		}
	}
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i], i
	}
	return s, len(s)
}

// Strings decodes a field klog wrote as a JSON list of strings
// (["NodeAffinity","TaintToleration"]) or as a JSON set ({"A":{},"B":{}},
// how a sets.Set is written); a plain value is a list of one.
func Strings(v string) []string {
	var list []string
	if json.Unmarshal([]byte(v), &list) == nil {
		return list
	}
	var set map[string]json.RawMessage
	if json.Unmarshal([]byte(v), &set) == nil {
		for k := range set {
			list = append(list, k)
		}
		slices.Sort(list)
		return list
	}
	if v == "" || v == "null" {
		return nil
	}
	return []string{v}
}
