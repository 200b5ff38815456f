package conformance

import (
	"bytes"
	"strings"
)

// archive is a parsed txtar file: a free comment, then named sections.
type archive struct {
	Comment []byte
	Files   []archiveFile
}

// archiveFile is one "-- name --" section of an archive.
type archiveFile struct {
	Name string
	Data []byte
}

// parseArchive parses the txtar format: lines "-- NAME --" start a
// section, everything before the first one is the comment.
func parseArchive(data []byte) *archive {
	a := &archive{}
	var cur *archiveFile
	var buf []byte
	flush := func() {
		if cur == nil {
			a.Comment = buf
		} else {
			cur.Data = buf
			a.Files = append(a.Files, *cur)
		}
		buf = nil
	}
	for len(data) > 0 {
		line := data
		rest := []byte(nil)
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, rest = data[:i+1], data[i+1:]
		}
		data = rest
		if name, ok := markerName(line); ok {
			flush()
			cur = &archiveFile{Name: name}
			continue
		}
		buf = append(buf, line...)
	}
	flush()
	return a
}

// markerName reports whether line is a "-- NAME --" marker, and its name.
func markerName(line []byte) (string, bool) {
	s := strings.TrimRight(string(line), "\r\n")
	if !strings.HasPrefix(s, "-- ") || !strings.HasSuffix(s, " --") || len(s) < 7 {
		return "", false
	}
	name := strings.TrimSpace(s[3 : len(s)-3])
	return name, name != ""
}

// format writes the archive back, each section ending in a newline.
func (a *archive) format() []byte {
	var b bytes.Buffer
	b.Write(fixNL(a.Comment))
	for _, f := range a.Files {
		b.WriteString("-- " + f.Name + " --\n")
		b.Write(fixNL(f.Data))
	}
	return b.Bytes()
}

func fixNL(data []byte) []byte {
	if len(data) == 0 || data[len(data)-1] == '\n' {
		return data
	}
	return append(append([]byte(nil), data...), '\n')
}

// section returns the data of the section called name.
func (a *archive) section(name string) ([]byte, bool) {
	for _, f := range a.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// setSection replaces the data of section name, appending it if missing.
func (a *archive) setSection(name string, data []byte) {
	for i := range a.Files {
		if a.Files[i].Name == name {
			a.Files[i].Data = data
			return
		}
	}
	// A new section goes before the first want/ section, so expectations
	// read in order: responses, then files.
	for i := range a.Files {
		if strings.HasPrefix(a.Files[i].Name, "want/") {
			a.Files = append(a.Files[:i], append([]archiveFile{{Name: name, Data: data}}, a.Files[i:]...)...)
			return
		}
	}
	a.Files = append(a.Files, archiveFile{Name: name, Data: data})
}
