package search

import (
	"fmt"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
)

// fileTypes maps a type name to the globs of its file names, as ripgrep
// 13 defines them (`rg --type-list`), plus a few newer extensions
// (.pyi, .mts, .cts) that ripgrep 14 added. Built on first use, not when
// the program starts.
var fileTypes = sync.OnceValue(func() map[string][]string {
	types := map[string][]string{
		"agda":         {"*.agda", "*.lagda"},
		"aidl":         {"*.aidl"},
		"amake":        {"*.bp", "*.mk"},
		"asciidoc":     {"*.adoc", "*.asc", "*.asciidoc"},
		"asm":          {"*.S", "*.asm", "*.s"},
		"asp":          {"*.ascx", "*.ascx.cs", "*.ascx.vb", "*.aspx", "*.aspx.cs", "*.aspx.vb"},
		"ats":          {"*.ats", "*.dats", "*.hats", "*.sats"},
		"avro":         {"*.avdl", "*.avpr", "*.avsc"},
		"awk":          {"*.awk"},
		"bazel":        {"*.BUILD", "*.bazel", "*.bazelrc", "*.bzl", "BUILD", "WORKSPACE"},
		"bitbake":      {"*.bb", "*.bbappend", "*.bbclass", "*.conf", "*.inc"},
		"brotli":       {"*.br"},
		"buildstream":  {"*.bst"},
		"bzip2":        {"*.bz2", "*.tbz2"},
		"c":            {"*.[chH]", "*.[chH].in", "*.cats"},
		"cabal":        {"*.cabal"},
		"cbor":         {"*.cbor"},
		"ceylon":       {"*.ceylon"},
		"clojure":      {"*.clj", "*.cljc", "*.cljs", "*.cljx"},
		"cmake":        {"*.cmake", "CMakeLists.txt"},
		"coffeescript": {"*.coffee"},
		"config":       {"*.cfg", "*.conf", "*.config", "*.ini"},
		"coq":          {"*.v"},
		"cpp":          {"*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc", "*.cc.in", "*.hh", "*.hh.in", "*.inl"},
		"creole":       {"*.creole"},
		"crystal":      {"*.cr", "Projectfile"},
		"cs":           {"*.cs"},
		"csharp":       {"*.cs"},
		"cshtml":       {"*.cshtml"},
		"css":          {"*.css", "*.scss"},
		"csv":          {"*.csv"},
		"cython":       {"*.pxd", "*.pxi", "*.pyx"},
		"d":            {"*.d"},
		"dart":         {"*.dart"},
		"dhall":        {"*.dhall"},
		"diff":         {"*.diff", "*.patch"},
		"docker":       {"*Dockerfile*"},
		"dvc":          {"*.dvc", "Dvcfile"},
		"ebuild":       {"*.ebuild"},
		"edn":          {"*.edn"},
		"elisp":        {"*.el"},
		"elixir":       {"*.eex", "*.ex", "*.exs"},
		"elm":          {"*.elm"},
		"erb":          {"*.erb"},
		"erlang":       {"*.erl", "*.hrl"},
		"fidl":         {"*.fidl"},
		"fish":         {"*.fish"},
		"flatbuffers":  {"*.fbs"},
		"fortran":      {"*.F", "*.F77", "*.F90", "*.F95", "*.f", "*.f77", "*.f90", "*.f95", "*.pfo"},
		"fsharp":       {"*.fs", "*.fsi", "*.fsx"},
		"fut":          {".fut"},
		"gap":          {"*.g", "*.gap", "*.gd", "*.gi", "*.tst"},
		"gn":           {"*.gn", "*.gni"},
		"go":           {"*.go"},
		"gradle":       {"*.gradle"},
		"groovy":       {"*.gradle", "*.groovy"},
		"gzip":         {"*.gz", "*.tgz"},
		"h":            {"*.h", "*.hpp"},
		"haml":         {"*.haml"},
		"haskell":      {"*.c2hs", "*.cpphs", "*.hs", "*.hsc", "*.lhs"},
		"hbs":          {"*.hbs"},
		"hs":           {"*.hs", "*.lhs"},
		"html":         {"*.ejs", "*.htm", "*.html"},
		"idris":        {"*.idr", "*.lidr"},
		"java":         {"*.java", "*.jsp", "*.jspx", "*.properties"},
		"jinja":        {"*.j2", "*.jinja", "*.jinja2"},
		"jl":           {"*.jl"},
		"js":           {"*.js", "*.jsx", "*.vue"},
		"json":         {"*.json", "composer.lock"},
		"jsonl":        {"*.jsonl"},
		"julia":        {"*.jl"},
		"jupyter":      {"*.ipynb", "*.jpynb"},
		"k":            {"*.k"},
		"kotlin":       {"*.kt", "*.kts"},
		"less":         {"*.less"},
		"license":      {"*[.-]LICEN[CS]E*", "AGPL-*[0-9]*", "APACHE-*[0-9]*", "BSD-*[0-9]*", "CC-BY-*", "COPYING", "COPYING[.-]*", "COPYRIGHT", "COPYRIGHT[.-]*", "EULA", "EULA[.-]*", "GFDL-*[0-9]*", "GNU-*[0-9]*", "GPL-*[0-9]*", "LGPL-*[0-9]*", "LICEN[CS]E", "LICEN[CS]E[.-]*", "MIT-*[0-9]*", "MPL-*[0-9]*", "NOTICE", "NOTICE[.-]*", "OFL-*[0-9]*", "PATENTS", "PATENTS[.-]*", "UNLICEN[CS]E", "UNLICEN[CS]E[.-]*", "agpl[.-]*", "gpl[.-]*", "lgpl[.-]*", "licen[cs]e", "licen[cs]e.*"},
		"lisp":         {"*.el", "*.jl", "*.lisp", "*.lsp", "*.sc", "*.scm"},
		"lock":         {"*.lock", "package-lock.json"},
		"log":          {"*.log"},
		"lua":          {"*.lua"},
		"lz4":          {"*.lz4"},
		"lzma":         {"*.lzma"},
		"m4":           {"*.ac", "*.m4"},
		"make":         {"*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Gg][Nn][Uu]makefile.am", "[Gg][Nn][Uu]makefile.in", "[Mm]akefile", "[Mm]akefile.am", "[Mm]akefile.in"},
		"mako":         {"*.mako", "*.mao"},
		"man":          {"*.[0-9][cEFMmpSx]", "*.[0-9lnpx]"},
		"markdown":     {"*.markdown", "*.md", "*.mdown", "*.mkdn"},
		"matlab":       {"*.m"},
		"md":           {"*.markdown", "*.md", "*.mdown", "*.mkdn"},
		"meson":        {"meson.build", "meson_options.txt"},
		"minified":     {"*.min.css", "*.min.html", "*.min.js"},
		"mint":         {"*.mint"},
		"mk":           {"mkfile"},
		"ml":           {"*.ml"},
		"msbuild":      {"*.csproj", "*.fsproj", "*.proj", "*.props", "*.targets", "*.vcxproj"},
		"nim":          {"*.nim", "*.nimble", "*.nimf", "*.nims"},
		"nix":          {"*.nix"},
		"objc":         {"*.h", "*.m"},
		"objcpp":       {"*.h", "*.mm"},
		"ocaml":        {"*.ml", "*.mli", "*.mll", "*.mly"},
		"org":          {"*.org", "*.org_archive"},
		"pascal":       {"*.dpr", "*.inc", "*.lpr", "*.pas", "*.pp"},
		"pdf":          {"*.pdf"},
		"perl":         {"*.PL", "*.perl", "*.pl", "*.plh", "*.plx", "*.pm", "*.t"},
		"php":          {"*.php", "*.php3", "*.php4", "*.php5", "*.phtml"},
		"po":           {"*.po"},
		"pod":          {"*.pod"},
		"postscript":   {"*.eps", "*.ps"},
		"protobuf":     {"*.proto"},
		"ps":           {"*.cdxml", "*.ps1", "*.ps1xml", "*.psd1", "*.psm1"},
		"puppet":       {"*.erb", "*.pp", "*.rb"},
		"purs":         {"*.purs"},
		"py":           {"*.py"},
		"qmake":        {"*.prf", "*.pri", "*.pro"},
		"qml":          {"*.qml"},
		"r":            {"*.R", "*.Rmd", "*.Rnw", "*.r"},
		"racket":       {"*.rkt"},
		"rdoc":         {"*.rdoc"},
		"readme":       {"*README", "README*"},
		"red":          {"*.r", "*.red", "*.reds"},
		"robot":        {"*.robot"},
		"rst":          {"*.rst"},
		"ruby":         {"*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"},
		"rust":         {"*.rs"},
		"sass":         {"*.sass", "*.scss"},
		"scala":        {"*.sbt", "*.scala"},
		"sh":           {"*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh", "*.zsh", ".bash_login", ".bash_logout", ".bash_profile", ".bashrc", ".cshrc", ".kshrc", ".login", ".logout", ".profile", ".tcshrc", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc", "bash_login", "bash_logout", "bash_profile", "bashrc", "profile", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"},
		"slim":         {"*.skim", "*.slim", "*.slime"},
		"smarty":       {"*.tpl"},
		"sml":          {"*.sig", "*.sml"},
		"soy":          {"*.soy"},
		"spark":        {"*.spark"},
		"spec":         {"*.spec"},
		"sql":          {"*.psql", "*.sql"},
		"stylus":       {"*.styl"},
		"sv":           {"*.h", "*.sv", "*.svh", "*.v", "*.vg"},
		"svg":          {"*.svg"},
		"swift":        {"*.swift"},
		"swig":         {"*.def", "*.i"},
		"systemd":      {"*.automount", "*.conf", "*.device", "*.link", "*.mount", "*.path", "*.scope", "*.service", "*.slice", "*.socket", "*.swap", "*.target", "*.timer"},
		"taskpaper":    {"*.taskpaper"},
		"tcl":          {"*.tcl"},
		"tex":          {"*.bib", "*.cls", "*.dtx", "*.ins", "*.ltx", "*.sty", "*.tex"},
		"textile":      {"*.textile"},
		"tf":           {"*.tf"},
		"thrift":       {"*.thrift"},
		"toml":         {"*.toml", "Cargo.lock"},
		"ts":           {"*.ts", "*.tsx"},
		"twig":         {"*.twig"},
		"txt":          {"*.txt"},
		"typoscript":   {"*.ts", "*.typoscript"},
		"vala":         {"*.vala"},
		"vb":           {"*.vb"},
		"vcl":          {"*.vcl"},
		"verilog":      {"*.sv", "*.svh", "*.v", "*.vh"},
		"vhdl":         {"*.vhd", "*.vhdl"},
		"vim":          {"*.vim"},
		"vimscript":    {"*.vim"},
		"webidl":       {"*.idl", "*.webidl", "*.widl"},
		"wiki":         {"*.mediawiki", "*.wiki"},
		"xml":          {"*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt"},
		"xz":           {"*.txz", "*.xz"},
		"yacc":         {"*.y"},
		"yaml":         {"*.yaml", "*.yml"},
		"yang":         {"*.yang"},
		"z":            {"*.Z"},
		"zig":          {"*.zig"},
		"zsh":          {"*.zsh", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"},
		"zstd":         {"*.zst", "*.zstd"},
	}
	types["py"] = append(types["py"], "*.pyi")
	types["ts"] = append(types["ts"], "*.mts", "*.cts")
	types["typescript"] = types["ts"]
	types["javascript"] = types["js"]
	types["python"] = types["py"]
	types["golang"] = types["go"]
	return types
})

// commonTypes are the type names an error suggests.
const commonTypes = "go, py, js, ts, rust, java, c, cpp, cs, ruby, php, swift, kotlin, md, json, yaml, toml, sh, html, css, sql"

// typeFilter keeps files whose name matches one of a type's globs.
type typeFilter struct {
	name     string
	literals map[string]bool // whole names ("Makefile")
	suffixes []string        // "*.go" → ".go"
	globs    []string        // the rest, for doublestar
}

// compileType looks up a file type by name.
func compileType(name string) (*typeFilter, error) {
	globs, ok := fileTypes()[name]
	if !ok {
		return nil, fmt.Errorf("unknown file type %q for type: use one of ripgrep's %d type names, such as %s; or pass a glob instead (e.g. glob \"*.ext\")",
			name, len(fileTypes()), commonTypes)
	}
	tf := &typeFilter{name: name, literals: map[string]bool{}}
	for _, g := range globs {
		switch {
		case !hasMeta(g):
			tf.literals[g] = true
		case g[0] == '*' && !hasMeta(g[1:]):
			tf.suffixes = append(tf.suffixes, g[1:])
		default:
			tf.globs = append(tf.globs, g)
		}
	}
	return tf, nil
}

// matches reports whether a file named name is of this type.
func (tf *typeFilter) matches(name string) bool {
	if tf.literals[name] {
		return true
	}
	for _, s := range tf.suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	for _, g := range tf.globs {
		if doublestar.MatchUnvalidated(g, name) {
			return true
		}
	}
	return false
}
