package tui

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Syntax highlighting for code blocks in replies: comments, strings,
// numbers, keywords and built-in names of the languages a coding agent
// shows most, by one small scanner driven by a table. (chroma, which did
// this for glamour, registers its 250 lexers and 70 styles when the
// program starts: most of `serve`'s start-up, for a feature only chat
// shows.) A language the table lacks is shown unhighlighted.

// Token styles.
const (
	hlComment = sgrGrey + ";" + sgrItalic
	hlString  = sgrGreen
	hlNumber  = sgrYellow
	hlKeyword = sgrMagenta
	hlBuiltin = sgrCyan
)

// syntax describes one language to the scanner.
type syntax struct {
	line     []string    // line comment openers
	block    [][2]string // block comment opener and closer
	quotes   string      // string delimiters; a backquote may span lines
	triple   bool        // """ and ''' strings (Python)
	keywords string      // space separated
	builtins string      // types, constants and built-in functions
	fold     bool        // keywords ignore case (SQL)
	vars     bool        // $NAME and ${...} are names (shells)
	hashWord bool        // # starts a comment only at the start of a word (shells)
}

const (
	cKeywords = "auto break case char const continue default do double else enum extern float for goto if inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while " +
		"class namespace template typename public private protected virtual override final new delete this using try catch throw operator friend explicit constexpr nullptr true false bool"
	jsKeywords = "break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return super switch this throw try typeof var void while with yield async await static get set " +
		"interface type enum implements private public protected readonly namespace declare abstract as keyof satisfies"
	jsBuiltins = "true false null undefined NaN Infinity string number boolean any unknown never object console Promise Array Object String Number Map Set Error JSON Math"
	shKeywords = "if then else elif fi for while until do done case esac in function select time return local export readonly declare typeset set unset shift exit break continue source alias trap eval exec"
	shBuiltins = "echo printf read cd pwd test true false kill wait cat grep sed awk ls cp mv rm mkdir go git make npm"
)

// syntaxFor is the scanner's table: the syntax of the language a fenced
// code block's info string names, nil for one it lacks. Built per call,
// for the same reason as the styles.
func syntaxFor(lang string) *syntax {
	goSyn := &syntax{line: []string{"//"}, block: [][2]string{{"/*", "*/"}}, quotes: "\"'`",
		keywords: "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var",
		builtins: "bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any comparable true false nil iota append cap clear close complex copy delete imag len make max min new panic print println real recover"}
	py := &syntax{line: []string{"#"}, quotes: "\"'", triple: true,
		keywords: "and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case",
		builtins: "True False None self cls int str float bool list dict set tuple bytes object type len range print open isinstance super enumerate zip map filter sorted"}
	js := &syntax{line: []string{"//"}, block: [][2]string{{"/*", "*/"}}, quotes: "\"'`", keywords: jsKeywords, builtins: jsBuiltins}
	sh := &syntax{line: []string{"#"}, quotes: "\"'", keywords: shKeywords, builtins: shBuiltins, vars: true, hashWord: true}
	c := &syntax{line: []string{"//"}, block: [][2]string{{"/*", "*/"}}, quotes: "\"'", keywords: cKeywords,
		builtins: "NULL size_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t std string vector map printf malloc free"}
	java := &syntax{line: []string{"//"}, block: [][2]string{{"/*", "*/"}}, quotes: "\"'",
		keywords: "abstract assert break case catch class const continue default do else enum extends final finally for goto if implements import instanceof interface native new package private protected public return static strictfp super switch synchronized this throw throws transient try void volatile while var record sealed permits yield " +
			"fun val when object companion data override open internal lateinit by is as in out suspend typealias " +
			"using namespace struct readonly ref params base async await get set let guard func init deinit extension protocol self",
		builtins: "true false null nil int long short byte char boolean float double String Object List Map Integer Unit Any Int Boolean Bool Double"}
	rust := &syntax{line: []string{"//"}, block: [][2]string{{"/*", "*/"}}, quotes: "\"",
		keywords: "as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while",
		builtins: "true false i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str String Vec Option Result Box Some None Ok Err println format vec"}
	sql := &syntax{line: []string{"--"}, block: [][2]string{{"/*", "*/"}}, quotes: "'\"", fold: true,
		keywords: "select from where and or not insert into values update set delete create table drop alter add index view join left right inner outer full on as group by order having limit offset union all distinct case when then else end is null like in between exists primary key foreign references default unique begin commit rollback with returning",
		builtins: "count sum avg min max coalesce integer int text varchar char boolean date timestamp serial bigint real true false"}
	yaml := &syntax{line: []string{"#"}, quotes: "\"'", hashWord: true, builtins: "true false null yes no on off"}
	toml := &syntax{line: []string{"#"}, quotes: "\"'", builtins: "true false"}
	json := &syntax{quotes: "\"", builtins: "true false null"}
	ruby := &syntax{line: []string{"#"}, quotes: "\"'", hashWord: true,
		keywords: "alias and begin break case class def defined do else elsif end ensure false for if in module next nil not or redo rescue retry return self super then true undef unless until when while yield require attr_accessor",
		builtins: "puts print p nil true false"}
	lua := &syntax{line: []string{"--"}, quotes: "\"'",
		keywords: "and break do else elseif end false for function goto if in local nil not or repeat return then true until while",
		builtins: "print pairs ipairs require table string math"}
	php := &syntax{line: []string{"//", "#"}, block: [][2]string{{"/*", "*/"}}, quotes: "\"'", vars: true, keywords: jsKeywords + " echo function public private protected namespace use foreach endforeach elseif",
		builtins: "true false null array"}
	docker := &syntax{line: []string{"#"}, quotes: "\"'", fold: true, vars: true,
		keywords: "from run cmd label expose env add copy entrypoint volume user workdir arg onbuild stopsignal healthcheck shell as"}
	mk := &syntax{line: []string{"#"}, quotes: "\"'", vars: true, keywords: "ifeq ifneq ifdef ifndef else endif include define endef export override"}
	css := &syntax{block: [][2]string{{"/*", "*/"}}, quotes: "\"'", keywords: "important media import"}
	for names, s := range map[string]*syntax{
		"go golang":                 goSyn,
		"python py python3 py3 pyi": py,
		"javascript js jsx mjs cjs typescript ts tsx node":        js,
		"bash sh shell zsh console shellsession ksh fish":         sh,
		"c h cpp c++ cc cxx hpp hh cuda objective-c objc":         c,
		"java kotlin kt kts scala csharp cs c# swift dart groovy": java,
		"rust rs": rust,
		"sql postgresql postgres mysql sqlite plpgsql": sql,
		"yaml yml":                        yaml,
		"toml ini cfg conf properties":    toml,
		"json jsonc json5 jsonl":          json,
		"ruby rb":                         ruby,
		"lua":                             lua,
		"php":                             php,
		"dockerfile docker containerfile": docker,
		"makefile make mk":                mk,
		"css scss less":                   css,
	} {
		if slices.Contains(strings.Fields(names), lang) {
			return s
		}
	}
	return nil
}

// highlight styles code in the language lang names (a fenced block's info
// string); diffs by line, the rest by the scanner.
func highlight(code, lang string) string {
	lang = strings.ToLower(strings.TrimSpace(lang))
	if f := strings.Fields(lang); len(f) > 0 {
		lang = f[0]
	}
	switch lang {
	case "diff", "patch", "udiff":
		return highlightDiff(code)
	case "html", "xml", "svg", "vue", "svelte":
		return highlightMarkup(code)
	}
	syn := syntaxFor(lang)
	if syn == nil {
		return code
	}
	return syn.scan(code)
}

// styleLines styles each line of s on its own, so no style spans a line
// break (a line is printed after a margin of its own).
func styleLines(s string, st textStyle) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = st.render(l)
		}
	}
	return strings.Join(lines, "\n")
}

func highlightDiff(code string) string {
	lines := strings.Split(code, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			lines[i] = sgrBold.render(l)
		case strings.HasPrefix(l, "+"):
			lines[i] = sgrGreen.render(l)
		case strings.HasPrefix(l, "-"):
			lines[i] = sgrRed.render(l)
		case strings.HasPrefix(l, "@@"):
			lines[i] = hlBuiltin.render(l)
		}
	}
	return strings.Join(lines, "\n")
}

// highlightMarkup styles tags, their quoted attribute values and comments.
func highlightMarkup(code string) string {
	var b strings.Builder
	for code != "" {
		switch {
		case strings.HasPrefix(code, "<!--"):
			end := strings.Index(code, "-->")
			if end < 0 {
				end = len(code)
			} else {
				end += 3
			}
			b.WriteString(styleLines(code[:end], hlComment))
			code = code[end:]
		case code[0] == '<':
			end := strings.IndexByte(code, '>')
			if end < 0 {
				end = len(code) - 1
			}
			tag := code[:end+1]
			for tag != "" {
				q := strings.IndexAny(tag, "\"'")
				if q < 0 {
					b.WriteString(styleLines(tag, hlKeyword))
					break
				}
				b.WriteString(styleLines(tag[:q], hlKeyword))
				e := strings.IndexByte(tag[q+1:], tag[q])
				if e < 0 {
					e = len(tag) - q - 2
				}
				b.WriteString(styleLines(tag[q:q+e+2], hlString))
				tag = tag[q+e+2:]
			}
			code = code[end+1:]
		default:
			end := strings.IndexByte(code, '<')
			if end < 0 {
				end = len(code)
			}
			b.WriteString(code[:end])
			code = code[end:]
		}
	}
	return b.String()
}

// scan styles code token by token.
func (syn *syntax) scan(code string) string {
	var b strings.Builder
	emit := func(s string, st textStyle) { b.WriteString(styleLines(s, st)) }
	words := func(list string) map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.Fields(list) {
			if syn.fold {
				w = strings.ToLower(w)
			}
			m[w] = true
		}
		return m
	}
	keywords, builtins := words(syn.keywords), words(syn.builtins)
	prev := rune('\n') // the character before i
	for i := 0; i < len(code); {
		rest := code[i:]
		if n := syn.comment(rest, prev); n > 0 {
			emit(rest[:n], hlComment)
			i += n
			prev = ' '
			continue
		}
		r, size := utf8.DecodeRuneInString(rest)
		switch {
		case strings.ContainsRune(syn.quotes, r):
			n := syn.stringLen(rest)
			emit(rest[:n], hlString)
			i += n
			prev = '"'
			continue
		case syn.vars && r == '$':
			n := varLen(rest)
			emit(rest[:n], hlBuiltin)
			i += n
			prev = 'a'
			continue
		case unicode.IsDigit(r) && !isWordRune(prev):
			n := numberLen(rest)
			emit(rest[:n], hlNumber)
			i += n
			prev = '0'
			continue
		case isWordRune(r):
			n := strings.IndexFunc(rest, func(r rune) bool { return !isWordRune(r) && r != '-' || r == '-' && !syn.vars })
			if n < 0 {
				n = len(rest)
			}
			w := rest[:n]
			key := w
			if syn.fold {
				key = strings.ToLower(w)
			}
			switch {
			case keywords[key]:
				emit(w, hlKeyword)
			case builtins[key]:
				emit(w, hlBuiltin)
			default:
				b.WriteString(w)
			}
			i += n
			prev = 'a'
			continue
		}
		b.WriteString(rest[:size])
		i += size
		prev = r
	}
	return b.String()
}

// comment is the length of the comment rest starts with, 0 if none.
func (syn *syntax) comment(rest string, prev rune) int {
	for _, open := range syn.line {
		if strings.HasPrefix(rest, open) {
			if open == "#" && syn.hashWord && !unicode.IsSpace(prev) {
				continue
			}
			if n := strings.IndexByte(rest, '\n'); n >= 0 {
				return n
			}
			return len(rest)
		}
	}
	for _, bc := range syn.block {
		if strings.HasPrefix(rest, bc[0]) {
			if n := strings.Index(rest[len(bc[0]):], bc[1]); n >= 0 {
				return len(bc[0]) + n + len(bc[1])
			}
			return len(rest)
		}
	}
	return 0
}

// stringLen is the length of the string literal rest starts with: up to
// its closing quote, or the end of the line for an unclosed one (a
// backquote's and a triple quote's strings may span lines).
func (syn *syntax) stringLen(rest string) int {
	q := rest[0]
	if syn.triple && len(rest) >= 3 && rest[1] == q && rest[2] == q {
		if n := strings.Index(rest[3:], rest[:3]); n >= 0 {
			return n + 6
		}
		return len(rest)
	}
	for i := 1; i < len(rest); i++ {
		switch rest[i] {
		case '\\':
			if q != '`' && !(q == '\'' && syn.vars) {
				i++
			}
		case q:
			return i + 1
		case '\n':
			if q != '`' && !(syn.vars && q == '"') {
				return i
			}
		}
	}
	return len(rest)
}

// varLen is the length of a shell variable: $NAME, ${...}, $1, $?.
func varLen(rest string) int {
	if len(rest) < 2 {
		return len(rest)
	}
	if rest[1] == '{' {
		if n := strings.IndexByte(rest, '}'); n > 0 {
			return n + 1
		}
		return len(rest)
	}
	n := 1
	for n < len(rest) && (isWordRune(rune(rest[n])) && rest[n] < utf8.RuneSelf) {
		n++
	}
	if n == 1 && strings.ContainsRune("?#@*!$-0123456789", rune(rest[1])) {
		n = 2
	}
	return n
}

// numberLen is the length of the number rest starts with (digits, hex,
// a fraction, an exponent, underscores, a type suffix).
func numberLen(rest string) int {
	n := 0
	for n < len(rest) {
		c := rest[n]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '.' && n+1 < len(rest) && rest[n+1] >= '0' && rest[n+1] <= '9':
			n++
		default:
			return n
		}
	}
	return n
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
