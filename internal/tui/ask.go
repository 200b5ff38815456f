package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agent-mcp/agent-mcp/tools"
)

// Ask implements tools.Asker on the terminal. It shows message, then asks
// for each property of the form (a flat JSON Schema object, as MCP
// elicitation defines it) with a plain numbered prompt read line by line,
// in name order (q2 before q10):
//
//   - a single choice (oneOf of {const, title}, or enum with optional
//     enumNames) is answered by number, by a choice's value or title, or
//     by a prefix of the title only one choice has (y/yes picks the first
//     choice and n/no the last, so a permission prompt takes y or n);
//   - a multiple choice (type array with items.anyOf, items.oneOf or
//     items.enum) by numbers or titles separated by commas ("1,3");
//   - a boolean by y or n; an integer or number by its digits (checked
//     against minimum and maximum); anything else as text (checked
//     against minLength, maxLength and format).
//
// A choice property X with a free-text sibling X_other (AskUserQuestion's
// "other answer") is asked once: text that is not one of the choices
// becomes X_other's value.
//
// An empty answer takes the property's default, skips an optional
// property, and declines the form at a required one. "/decline" declines
// the form and "/cancel" dismisses it at any prompt; so do end of input,
// Ctrl-C at a terminal (which also interrupts the turn, see
// [UI.SetInterruptKey]) and the end of ctx (which returns ctx's error).
// A form left entirely empty is declined. Forms are asked one at a time,
// and the spinner keeps still while one is on screen.
func (u *UI) Ask(ctx context.Context, message string, schema map[string]any) (tools.Answer, error) {
	u.askMu.Lock()
	defer u.askMu.Unlock()
	u.mu.Lock()
	u.asking = true
	if u.full != nil {
		u.full.live.mu.Lock()
		u.full.live.pause()
		u.full.live.mu.Unlock()
		defer func() {
			u.full.live.mu.Lock()
			u.full.live.resume()
			u.full.live.mu.Unlock()
		}()
		u.mu.Unlock()
		u.full.println("\n" + styleBold.Render(strings.TrimRight(message, "\n")))
		u.mu.Lock()
	} else {
		u.endLineLocked()
		if u.tty {
			fmt.Fprint(u.out, "\r\x1b[K")
		}
		fmt.Fprintf(u.out, "\n%s\n", u.style("1", strings.TrimRight(message, "\n")))
	}
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.asking = false
		u.mu.Unlock()
	}()

	fields := parseForm(schema)
	confirm := len(fields) == 0
	if confirm {
		// A form without properties asks only for a go-ahead.
		fields = []*field{{title: "Continue", kind: kindBool, def: true}}
	} else if len(fields) > 1 || !fields[0].required {
		u.Printf("%s\n", u.style("2", "(Enter takes the default or skips an optional answer; /decline or /cancel refuses the form.)"))
	}
	content := map[string]any{}
	for _, f := range fields {
		got, err := u.askField(ctx, f, len(fields) > 1, content)
		switch {
		case err != nil:
			return tools.Answer{Action: "cancel"}, err
		case got == declined:
			return tools.Answer{Action: "decline"}, nil
		case got == cancelled:
			return tools.Answer{Action: "cancel"}, nil
		}
	}
	if confirm {
		if content[""] == false {
			return tools.Answer{Action: "decline"}, nil
		}
		return tools.Answer{Action: "accept", Content: map[string]any{}}, nil
	}
	if len(content) == 0 {
		return tools.Answer{Action: "decline"}, nil
	}
	return tools.Answer{Action: "accept", Content: content}, nil
}

type fieldKind int

const (
	kindText fieldKind = iota
	kindChoice
	kindMulti
	kindBool
	kindInteger
	kindNumber
	kindList // an array of free texts
)

// field is one property of a form.
type field struct {
	name, title, desc string
	kind              fieldKind
	choices           []choice
	required          bool
	// def is the property's default; nil when it has none.
	def any
	// other names the free-text sibling folded into a choice field.
	other string
	// Bounds: lengths of text, counts of a multiple choice, values of
	// numbers; nil when the schema sets none.
	minLen, maxLen, minItems, maxItems *int
	min, max                           *float64
	format                             string
}

type choice struct {
	value any
	title string
}

// outcome is what became of one field.
type outcome int

const (
	answered outcome = iota
	skipped
	declined
	cancelled
)

// parseForm reads a form's properties, in natural name order, folding
// each X_other text property into its choice property X.
func parseForm(schema map[string]any) []*field {
	props, _ := schema["properties"].(map[string]any)
	required := map[string]bool{}
	switch r := schema["required"].(type) {
	case []any:
		for _, n := range r {
			if s, ok := n.(string); ok {
				required[s] = true
			}
		}
	case []string:
		for _, s := range r {
			required[s] = true
		}
	}
	byName := map[string]*field{}
	names := make([]string, 0, len(props))
	for name, v := range props {
		p, _ := v.(map[string]any)
		byName[name] = parseField(name, p, required[name])
		names = append(names, name)
	}
	slices.SortFunc(names, naturalCompare)
	var out []*field
	folded := map[string]bool{}
	for _, name := range names {
		f := byName[name]
		if o := byName[name+"_other"]; o != nil && (f.kind == kindChoice || f.kind == kindMulti) &&
			!f.required && o.kind == kindText && !o.required {
			f.other = o.name
			folded[o.name] = true
		}
	}
	for _, name := range names {
		if !folded[name] {
			out = append(out, byName[name])
		}
	}
	return out
}

func parseField(name string, p map[string]any, required bool) *field {
	f := &field{name: name, required: required, def: p["default"]}
	f.title, _ = p["title"].(string)
	if f.title == "" {
		f.title = name
	}
	f.desc, _ = p["description"].(string)
	f.format, _ = p["format"].(string)
	f.minLen, f.maxLen = intProp(p, "minLength"), intProp(p, "maxLength")
	f.minItems, f.maxItems = intProp(p, "minItems"), intProp(p, "maxItems")
	if v, ok := number(p["minimum"]); ok {
		f.min = &v
	}
	if v, ok := number(p["maximum"]); ok {
		f.max = &v
	}
	typ, _ := p["type"].(string)
	if cs := choicesOf(p); len(cs) > 0 {
		f.kind, f.choices = kindChoice, cs
		return f
	}
	switch typ {
	case "array":
		items, _ := p["items"].(map[string]any)
		f.kind, f.choices = kindMulti, choicesOf(items)
		if len(f.choices) == 0 {
			f.kind = kindList
		}
	case "boolean":
		f.kind = kindBool
	case "integer":
		f.kind = kindInteger
	case "number":
		f.kind = kindNumber
	}
	return f
}

// choicesOf reads the choices of a property (or of an array's items):
// oneOf or anyOf of {const, title}, or enum with optional enumNames.
func choicesOf(p map[string]any) []choice {
	var out []choice
	for _, key := range []string{"oneOf", "anyOf"} {
		list, _ := p[key].([]any)
		for _, o := range list {
			m, ok := o.(map[string]any)
			if !ok {
				continue
			}
			v, ok := m["const"]
			if !ok {
				continue
			}
			t, _ := m["title"].(string)
			if t == "" {
				t = fmt.Sprint(v)
			}
			out = append(out, choice{v, t})
		}
	}
	enum, _ := p["enum"].([]any)
	names, _ := p["enumNames"].([]any)
	for i, e := range enum {
		t := fmt.Sprint(e)
		if i < len(names) {
			if s, ok := names[i].(string); ok && s != "" {
				t = s
			}
		}
		out = append(out, choice{e, t})
	}
	return out
}

func intProp(p map[string]any, key string) *int {
	if v, ok := number(p[key]); ok {
		n := int(v)
		return &n
	}
	return nil
}

// number reads a JSON Schema number given as any Go numeric type.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// naturalCompare orders names with their digit runs compared as numbers,
// so q2 comes before q10 and q1 before q1_other.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da != "" && db != "" {
			na, _ := strconv.Atoi(da)
			nb, _ := strconv.Atoi(db)
			if na != nb {
				return cmpInt(na, nb)
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		ra, sa := utf8.DecodeRuneInString(a)
		rb, sb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return cmpInt(int(ra), int(rb))
		}
		a, b = a[sa:], b[sb:]
	}
	return cmpInt(len(a), len(b))
}

func digitPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// askField puts one field to the user until the answer fits, storing it
// in content.
func (u *UI) askField(ctx context.Context, f *field, several bool, content map[string]any) (outcome, error) {
	var b strings.Builder
	if f.kind == kindChoice || f.kind == kindMulti {
		if several || f.desc != "" {
			head := f.title
			if f.desc != "" && f.desc != f.title {
				head += ": " + f.desc
			}
			fmt.Fprintf(&b, "%s\n", u.style("1", head))
		}
		for i, c := range f.choices {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, c.title)
		}
		if f.other != "" {
			b.WriteString("  Or type an answer of your own.\n")
		}
	} else if f.desc != "" && f.desc != f.title {
		fmt.Fprintf(&b, "%s\n", u.style("2", f.desc))
	}
	var choices []string
	if u.full != nil && f.kind == kindChoice {
		// The full UI offers the choices to pick with the arrow keys.
		b.Reset()
		for _, c := range f.choices {
			choices = append(choices, c.title)
		}
		if several || f.desc != "" {
			head := f.title
			if f.desc != "" && f.desc != f.title {
				head += ": " + f.desc
			}
			b.WriteString(u.style("1", head))
		}
	}
	if b.Len() > 0 {
		u.Printf("%s", b.String())
	}
	prompt := f.prompt()
	for {
		line, err := u.readChoice(ctx, prompt, choices)
		switch {
		case errors.Is(err, ErrInterruptKey):
			u.keyInterrupt()
			return cancelled, nil
		case errors.Is(err, errEscape):
			return declined, nil
		case errors.Is(err, io.EOF):
			return cancelled, nil
		case err != nil:
			return cancelled, err
		}
		line = strings.TrimSpace(line)
		switch strings.ToLower(line) {
		case "/cancel":
			return cancelled, nil
		case "/decline":
			return declined, nil
		case "":
			switch {
			case f.def != nil:
				content[f.name] = f.defaultValue()
				return answered, nil
			case f.required:
				return declined, nil
			}
			return skipped, nil
		}
		problem := f.take(line, content)
		if problem == "" {
			return answered, nil
		}
		u.Printf("%s; try again (%s).\n", problem, f.emptyMeans())
	}
}

// defaultValue is the default in the form the content carries.
func (f *field) defaultValue() any {
	switch f.kind {
	case kindMulti, kindList:
		var out []any
		switch d := f.def.(type) {
		case []any:
			out = d
		case []string:
			for _, s := range d {
				out = append(out, s)
			}
		}
		return out
	case kindInteger:
		if v, ok := number(f.def); ok {
			return int(v)
		}
	case kindNumber:
		if v, ok := number(f.def); ok {
			return v
		}
	}
	return f.def
}

// emptyMeans says what an empty answer does at this field.
func (f *field) emptyMeans() string {
	switch {
	case f.def != nil:
		return "empty for the default"
	case f.required:
		return "empty to decline"
	}
	return "empty to skip"
}

// prompt is the line the answer is typed on.
func (f *field) prompt() string {
	switch f.kind {
	case kindChoice:
		p := fmt.Sprintf("Choose 1-%d", len(f.choices))
		if f.other != "" {
			p += " or type an answer"
		}
		if i := f.choiceIndex(f.def); i >= 0 {
			p += fmt.Sprintf(" [%d]", i+1)
		} else if !f.required {
			p += " (Enter to skip)"
		}
		return p + ": "
	case kindMulti:
		p := fmt.Sprintf("Choose any of 1-%d, separated by commas", len(f.choices))
		if f.other != "" {
			p += ", or type an answer"
		}
		if d, ok := f.defaultValue().([]any); ok && f.def != nil {
			var nums []string
			for _, v := range d {
				if i := f.choiceIndex(v); i >= 0 {
					nums = append(nums, strconv.Itoa(i+1))
				}
			}
			p += " [" + strings.Join(nums, ",") + "]"
		} else if !f.required {
			p += " (Enter to skip)"
		}
		return p + ": "
	case kindBool:
		switch f.def {
		case true:
			return f.title + " [Y/n]: "
		case false:
			return f.title + " [y/N]: "
		}
		return f.title + " [y/n]: "
	}
	p := f.title
	if f.kind == kindList {
		p += " (separate several with commas)"
	}
	if f.def != nil {
		p += fmt.Sprintf(" [%v]", f.def)
	} else if !f.required {
		p += " (optional)"
	}
	return p + ": "
}

func (f *field) choiceIndex(v any) int {
	if v == nil {
		return -1
	}
	for i, c := range f.choices {
		if fmt.Sprint(c.value) == fmt.Sprint(v) {
			return i
		}
	}
	return -1
}

// take parses a non-empty answer into content; it returns what is wrong
// with the answer, or "" when it was taken.
func (f *field) take(line string, content map[string]any) string {
	notOne := fmt.Sprintf("%q is not one of the answers", line)
	switch f.kind {
	case kindChoice:
		if c, ok := f.match(line, f.other == ""); ok {
			content[f.name] = c.value
			return ""
		}
		if f.other != "" {
			content[f.other] = line
			return ""
		}
		return notOne
	case kindMulti:
		return f.takeMulti(line, content)
	case kindList:
		var items []any
		for _, t := range strings.Split(line, ",") {
			if t = strings.TrimSpace(t); t != "" {
				if problem := f.checkText(t); problem != "" {
					return problem
				}
				items = append(items, t)
			}
		}
		if problem := f.checkCount(len(items)); problem != "" {
			return problem
		}
		content[f.name] = items
		return ""
	case kindBool:
		switch strings.ToLower(line) {
		case "y", "yes", "true":
			content[f.name] = true
		case "n", "no", "false":
			content[f.name] = false
		default:
			return notOne + " (y or n)"
		}
		return ""
	case kindInteger, kindNumber:
		v, err := strconv.ParseFloat(line, 64)
		if err != nil || (f.kind == kindInteger && v != float64(int64(v))) {
			what := "a number"
			if f.kind == kindInteger {
				what = "a whole number"
			}
			return fmt.Sprintf("%q is not %s", line, what)
		}
		if f.min != nil && v < *f.min {
			return fmt.Sprintf("%s must be at least %v", f.title, *f.min)
		}
		if f.max != nil && v > *f.max {
			return fmt.Sprintf("%s must be at most %v", f.title, *f.max)
		}
		if f.kind == kindInteger {
			content[f.name] = int(v)
		} else {
			content[f.name] = v
		}
		return ""
	}
	if problem := f.checkText(line); problem != "" {
		return problem
	}
	content[f.name] = line
	return ""
}

// match finds the choice an answer names: its number, its value or title,
// and with loose also y/n and a title prefix only one choice has.
func (f *field) match(s string, loose bool) (choice, bool) {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(f.choices) {
		return f.choices[n-1], true
	}
	for _, c := range f.choices {
		if strings.EqualFold(fmt.Sprint(c.value), s) || strings.EqualFold(c.title, s) {
			return c, true
		}
	}
	if !loose {
		return choice{}, false
	}
	low := strings.ToLower(s)
	switch low {
	case "y", "yes":
		return f.choices[0], true
	case "n", "no":
		return f.choices[len(f.choices)-1], true
	}
	var found []choice
	for _, c := range f.choices {
		if strings.HasPrefix(strings.ToLower(c.title), low) {
			found = append(found, c)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return choice{}, false
}

// takeMulti reads a multiple choice: numbers or choices separated by
// commas (numbers alone may be separated by spaces), the rest being the
// answer of one's own when the field has one.
func (f *field) takeMulti(line string, content map[string]any) string {
	if c, ok := f.match(line, false); ok {
		content[f.name] = []any{c.value}
		return ""
	}
	tokens := strings.Split(line, ",")
	if len(tokens) == 1 {
		if words := strings.Fields(line); len(words) > 1 && allNumbers(words) {
			tokens = words
		}
	}
	var picked []any
	seen := map[int]bool{}
	var rest []string
	for _, t := range tokens {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		c, ok := f.match(t, false)
		if !ok {
			rest = append(rest, t)
			continue
		}
		if i := f.choiceIndex(c.value); !seen[i] {
			seen[i] = true
			picked = append(picked, c.value)
		}
	}
	if len(rest) > 0 && f.other == "" {
		return fmt.Sprintf("%q is not one of the answers", rest[0])
	}
	if len(picked) > 0 || len(rest) == 0 {
		if problem := f.checkCount(len(picked)); problem != "" {
			return problem
		}
		content[f.name] = picked
	}
	if len(rest) > 0 {
		content[f.other] = strings.Join(rest, ", ")
	}
	return ""
}

// checkCount checks the number of items of an array answer.
func (f *field) checkCount(n int) string {
	if f.minItems != nil && n < *f.minItems {
		return fmt.Sprintf("%s needs at least %d", f.title, *f.minItems)
	}
	if f.maxItems != nil && n > *f.maxItems {
		return fmt.Sprintf("%s takes at most %d", f.title, *f.maxItems)
	}
	return ""
}

func allNumbers(words []string) bool {
	for _, w := range words {
		for _, r := range w {
			if !unicode.IsDigit(r) {
				return false
			}
		}
	}
	return true
}

// checkText checks a text answer against the field's lengths and format.
func (f *field) checkText(s string) string {
	n := utf8.RuneCountInString(s)
	if f.minLen != nil && n < *f.minLen {
		return fmt.Sprintf("%s must be at least %d characters", f.title, *f.minLen)
	}
	if f.maxLen != nil && n > *f.maxLen {
		return fmt.Sprintf("%s must be at most %d characters", f.title, *f.maxLen)
	}
	switch f.format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return fmt.Sprintf("%q is not an email address", s)
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return fmt.Sprintf("%q is not a URI (like https://example.com)", s)
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return fmt.Sprintf("%q is not a date (YYYY-MM-DD)", s)
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return fmt.Sprintf("%q is not a date and time (like 2025-01-31T14:00:00Z)", s)
		}
	}
	return ""
}

// Confirm asks a question that has two answers, yes and no (their labels),
// through the UI's own question widget: in the full UI the choices are
// picked with the arrow keys or by number, and keys typed before the
// question was shown stay in the prompt's editor rather than answering it;
// plain lines put it as a numbered form ([UI.Ask]). Esc, Ctrl-C and the end
// of input answer no. message is shown as it is, control characters made
// visible.
func (u *UI) Confirm(ctx context.Context, message, yes, no string) (bool, error) {
	message = terminalSafe(strings.TrimRight(message, "\n"))
	if u.full == nil {
		ans, err := u.Ask(ctx, message, map[string]any{
			"type": "object",
			"properties": map[string]any{"answer": map[string]any{
				"type": "string", "title": "Answer",
				"oneOf": []any{map[string]any{"const": "yes", "title": yes}, map[string]any{"const": "no", "title": no}},
			}},
			"required": []any{"answer"},
		})
		return err == nil && ans.Action == "accept" && ans.Content["answer"] == "yes", err
	}
	u.askMu.Lock()
	defer u.askMu.Unlock()
	u.full.println("\n" + styleBold.Render(message))
	for {
		line, err := u.readFullMsg(ctx, readMsg{prompt: "Choose 1-2: ", form: true, choices: []string{yes, no}, strict: true})
		switch {
		case errors.Is(err, errEscape), errors.Is(err, ErrInterruptKey), errors.Is(err, io.EOF):
			return false, nil
		case err != nil:
			return false, err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "1", "y", "yes":
			return true, nil
		case "2", "n", "no":
			return false, nil
		}
	}
}
