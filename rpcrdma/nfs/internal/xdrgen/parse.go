// Package xdrgen reads XDR language files (RFC 4506 section 6, with the
// program/version/procedure definitions of RFC 5531 section 12) and writes Go
// code that walks XDR data of those types without building values: each
// generated walker advances a cursor over the bytes, checking every length
// against the bytes left, and reports the data items marked DDP-eligible.
//
// The package nfs uses it (go generate) to turn the XDR of NFSv3, NFSv4.x,
// MOUNT and NFSACL into the walkers that step over procedure arguments and
// results and over COMPOUND operations.
//
// Extensions to the XDR language, as lines starting with '%' (rpcgen passes
// such lines through, so the files stay valid rpcgen input):
//
//	%ddp KIND            the next declaration (an opaque<> or string<>) is a
//	                     DDP-eligible data item; the walker calls
//	                     d.ddp(KIND, max) for it instead of skipping it.
//	%hook METHOD          the next declaration is walked by the hand-written
//	                     method d.METHOD() (to pick a value out, e.g. the
//	                     callback program number of CREATE_SESSION).
//	%export ENUM GoType PREFIX
//	                     emit enum ENUM as Go type GoType (uint32) with its
//	                     constants and a String method that returns each
//	                     name with PREFIX removed.
package xdrgen

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Kind of a declaration (RFC 4506 section 6.3, "declaration").
type Kind int

const (
	KVoid        Kind = iota
	KPlain            // type-specifier identifier
	KFixedArray       // type-specifier identifier [ value ]
	KVarArray         // type-specifier identifier < [value] >
	KOpaqueFixed      // opaque identifier [ value ]
	KOpaqueVar        // opaque identifier < [value] >
	KString           // string identifier < [value] >
	KOptional         // type-specifier * identifier
)

// Decl is one declaration: a struct field, a union arm, a typedef.
type Decl struct {
	Kind Kind
	Type string // type name for KPlain/KFixedArray/KVarArray/KOptional
	Name string
	Size string // array/opaque size or maximum; "" = no maximum
	DDP  string // %ddp kind, or ""
	Hook string // %hook method, or ""
	Line int
}

type EnumValue struct {
	Name  string
	Value string
}

type Case struct {
	Values []string
	Arm    Decl
}

type Proc struct {
	Name     string
	Num      string
	Arg, Res string // type names; "void" for none
}

type Version struct {
	Name  string
	Num   string
	Procs []Proc
}

type Program struct {
	Name     string
	Num      string
	Versions []Version
}

// Def is a top-level definition.
type Def struct {
	Kind    string // "const", "enum", "struct", "union", "typedef"
	Name    string
	Value   string      // const
	Enum    []EnumValue // enum
	Fields  []Decl      // struct
	Disc    Decl        // union discriminant
	Cases   []Case      // union
	Default *Decl       // union default arm (nil: none)
	Typedef Decl        // typedef
	Line    int
}

type Export struct {
	Enum, GoType, Prefix string
}

// Spec is one parsed XDR file.
type Spec struct {
	Defs     []*Def
	Programs []Program
	Exports  []Export
}

type token struct {
	s      string
	line   int
	pragma []string // for '%' lines
}

func lex(src string) ([]token, error) {
	var toks []token
	line := 1
	i := 0
	bol := true
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
			bol = true
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case bol && c == '%':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				j = len(src) - i
			}
			f := strings.Fields(src[i+1 : i+j])
			if len(f) > 0 && (f[0] == "ddp" || f[0] == "export" || f[0] == "hook") {
				toks = append(toks, token{s: "%", line: line, pragma: f})
			}
			i += j
			continue
		case strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return nil, fmt.Errorf("line %d: unterminated comment", line)
			}
			line += strings.Count(src[i:i+2+j+2], "\n")
			i += 2 + j + 2
			bol = false
			continue
		case strings.HasPrefix(src[i:], "//"):
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				j = len(src) - i
			}
			i += j
			continue
		}
		bol = false
		if unicode.IsLetter(rune(c)) || c == '_' || unicode.IsDigit(rune(c)) || (c == '-' && i+1 < len(src) && unicode.IsDigit(rune(src[i+1]))) {
			j := i + 1
			for j < len(src) && (unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j])) || src[j] == '_') {
				j++
			}
			toks = append(toks, token{s: src[i:j], line: line})
			i = j
			continue
		}
		if strings.ContainsRune("{}()[]<>;,=:*", rune(c)) {
			toks = append(toks, token{s: string(c), line: line})
			i++
			continue
		}
		return nil, fmt.Errorf("line %d: unexpected character %q", line, c)
	}
	return toks, nil
}

type parser struct {
	toks []token
	pos  int
	ddp  string
	hook string
	spec *Spec
}

func (p *parser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos].s
	}
	return ""
}

func (p *parser) line() int {
	if p.pos < len(p.toks) {
		return p.toks[p.pos].line
	}
	if len(p.toks) > 0 {
		return p.toks[len(p.toks)-1].line
	}
	return 0
}

func (p *parser) next() string {
	s := p.peek()
	p.pos++
	return s
}

func (p *parser) expect(s string) error {
	if got := p.next(); got != s {
		return fmt.Errorf("line %d: want %q, got %q", p.line(), s, got)
	}
	return nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	c := rune(s[0])
	return unicode.IsLetter(c) || c == '_'
}

func (p *parser) ident() (string, error) {
	s := p.next()
	if !isIdent(s) {
		return "", fmt.Errorf("line %d: want identifier, got %q", p.line(), s)
	}
	return s, nil
}

// pragmas consumes '%' tokens.
func (p *parser) pragmas() error {
	for p.pos < len(p.toks) && p.toks[p.pos].s == "%" {
		f := p.toks[p.pos].pragma
		p.pos++
		switch f[0] {
		case "ddp":
			if len(f) != 2 {
				return fmt.Errorf("line %d: %%ddp wants one kind", p.line())
			}
			p.ddp = f[1]
		case "hook":
			if len(f) != 2 {
				return fmt.Errorf("line %d: %%hook wants one method", p.line())
			}
			p.hook = f[1]
		case "export":
			if len(f) != 4 {
				return fmt.Errorf("line %d: %%export wants ENUM GoType PREFIX", p.line())
			}
			p.spec.Exports = append(p.spec.Exports, Export{f[1], f[2], f[3]})
		}
	}
	return nil
}

// typeSpec reads a type-specifier and returns a canonical name.
func (p *parser) typeSpec() (string, error) {
	t := p.next()
	switch t {
	case "unsigned":
		switch p.peek() {
		case "int":
			p.next()
			return "unsigned int", nil
		case "hyper":
			p.next()
			return "unsigned hyper", nil
		case "long":
			p.next()
			return "unsigned int", nil
		}
		return "unsigned int", nil
	case "struct", "union", "enum":
		return "", fmt.Errorf("line %d: inline %s definitions are not supported", p.line(), t)
	}
	if !isIdent(t) {
		return "", fmt.Errorf("line %d: want type, got %q", p.line(), t)
	}
	return t, nil
}

func (p *parser) value() (string, error) {
	s := p.next()
	if s == "" || s == ";" || s == ">" || s == "]" {
		return "", fmt.Errorf("line %d: want value, got %q", p.line(), s)
	}
	return s, nil
}

// decl reads a declaration (without the trailing ';').
func (p *parser) decl() (Decl, error) {
	if err := p.pragmas(); err != nil {
		return Decl{}, err
	}
	d := Decl{Line: p.line(), DDP: p.ddp, Hook: p.hook}
	p.ddp, p.hook = "", ""
	if p.peek() == "void" {
		p.next()
		d.Kind = KVoid
		return d, nil
	}
	switch p.peek() {
	case "opaque", "string":
		isString := p.next() == "string"
		name, err := p.ident()
		if err != nil {
			return d, err
		}
		d.Name = name
		switch p.next() {
		case "[":
			if isString {
				return d, fmt.Errorf("line %d: string must be variable-length", p.line())
			}
			d.Kind = KOpaqueFixed
			if d.Size, err = p.value(); err != nil {
				return d, err
			}
			return d, p.expect("]")
		case "<":
			d.Kind = KOpaqueVar
			if isString {
				d.Kind = KString
			}
			if p.peek() != ">" {
				if d.Size, err = p.value(); err != nil {
					return d, err
				}
			}
			return d, p.expect(">")
		}
		return d, fmt.Errorf("line %d: opaque/string %s needs [n] or <n>", p.line(), name)
	}
	t, err := p.typeSpec()
	if err != nil {
		return d, err
	}
	d.Type = t
	if p.peek() == "*" {
		p.next()
		d.Kind = KOptional
		d.Name, err = p.ident()
		return d, err
	}
	if d.Name, err = p.ident(); err != nil {
		return d, err
	}
	switch p.peek() {
	case "[":
		p.next()
		d.Kind = KFixedArray
		if d.Size, err = p.value(); err != nil {
			return d, err
		}
		return d, p.expect("]")
	case "<":
		p.next()
		d.Kind = KVarArray
		if p.peek() != ">" {
			if d.Size, err = p.value(); err != nil {
				return d, err
			}
		}
		return d, p.expect(">")
	}
	d.Kind = KPlain
	return d, nil
}

// Parse parses the XDR source.
func Parse(src string) (*Spec, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, spec: &Spec{}}
	for {
		if err := p.pragmas(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.toks) {
			break
		}
		line := p.line()
		kw := p.next()
		def := &Def{Kind: kw, Line: line}
		switch kw {
		case "const":
			if def.Name, err = p.ident(); err != nil {
				return nil, err
			}
			if err = p.expect("="); err != nil {
				return nil, err
			}
			if def.Value, err = p.value(); err != nil {
				return nil, err
			}
		case "enum":
			if def.Name, err = p.ident(); err != nil {
				return nil, err
			}
			if err = p.expect("{"); err != nil {
				return nil, err
			}
			for {
				n, err := p.ident()
				if err != nil {
					return nil, err
				}
				if err = p.expect("="); err != nil {
					return nil, err
				}
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				def.Enum = append(def.Enum, EnumValue{n, v})
				if p.peek() == "," {
					p.next()
					continue
				}
				break
			}
			if err = p.expect("}"); err != nil {
				return nil, err
			}
		case "struct":
			if def.Name, err = p.ident(); err != nil {
				return nil, err
			}
			if err = p.expect("{"); err != nil {
				return nil, err
			}
			for p.peek() != "}" {
				d, err := p.decl()
				if err != nil {
					return nil, err
				}
				if err = p.expect(";"); err != nil {
					return nil, err
				}
				def.Fields = append(def.Fields, d)
			}
			p.next()
		case "union":
			if def.Name, err = p.ident(); err != nil {
				return nil, err
			}
			if err = p.expect("switch"); err != nil {
				return nil, err
			}
			if err = p.expect("("); err != nil {
				return nil, err
			}
			if def.Disc, err = p.decl(); err != nil {
				return nil, err
			}
			if err = p.expect(")"); err != nil {
				return nil, err
			}
			if err = p.expect("{"); err != nil {
				return nil, err
			}
			for p.peek() != "}" {
				if err := p.pragmas(); err != nil {
					return nil, err
				}
				switch p.next() {
				case "case":
					var c Case
					for {
						v, err := p.value()
						if err != nil {
							return nil, err
						}
						c.Values = append(c.Values, v)
						if err = p.expect(":"); err != nil {
							return nil, err
						}
						if p.peek() != "case" {
							break
						}
						p.next()
					}
					if c.Arm, err = p.decl(); err != nil {
						return nil, err
					}
					if err = p.expect(";"); err != nil {
						return nil, err
					}
					def.Cases = append(def.Cases, c)
				case "default":
					if err = p.expect(":"); err != nil {
						return nil, err
					}
					d, err := p.decl()
					if err != nil {
						return nil, err
					}
					if err = p.expect(";"); err != nil {
						return nil, err
					}
					def.Default = &d
				default:
					return nil, fmt.Errorf("line %d: want case or default in union %s", p.line(), def.Name)
				}
			}
			p.next()
		case "typedef":
			if def.Typedef, err = p.decl(); err != nil {
				return nil, err
			}
			def.Name = def.Typedef.Name
		case "program":
			prog, err := p.program()
			if err != nil {
				return nil, err
			}
			p.spec.Programs = append(p.spec.Programs, prog)
			continue
		default:
			return nil, fmt.Errorf("line %d: unexpected %q", line, kw)
		}
		if err = p.expect(";"); err != nil {
			return nil, err
		}
		p.spec.Defs = append(p.spec.Defs, def)
	}
	return p.spec, nil
}

func (p *parser) program() (Program, error) {
	var prog Program
	var err error
	if prog.Name, err = p.ident(); err != nil {
		return prog, err
	}
	if err = p.expect("{"); err != nil {
		return prog, err
	}
	for p.peek() == "version" {
		p.next()
		var v Version
		if v.Name, err = p.ident(); err != nil {
			return prog, err
		}
		if err = p.expect("{"); err != nil {
			return prog, err
		}
		for p.peek() != "}" {
			var pr Proc
			if pr.Res, err = p.typeSpec(); err != nil {
				return prog, err
			}
			if pr.Name, err = p.ident(); err != nil {
				return prog, err
			}
			if err = p.expect("("); err != nil {
				return prog, err
			}
			if pr.Arg, err = p.typeSpec(); err != nil {
				return prog, err
			}
			if err = p.expect(")"); err != nil {
				return prog, err
			}
			if err = p.expect("="); err != nil {
				return prog, err
			}
			if pr.Num, err = p.value(); err != nil {
				return prog, err
			}
			if err = p.expect(";"); err != nil {
				return prog, err
			}
			v.Procs = append(v.Procs, pr)
		}
		p.next()
		if err = p.expect("="); err != nil {
			return prog, err
		}
		if v.Num, err = p.value(); err != nil {
			return prog, err
		}
		if err = p.expect(";"); err != nil {
			return prog, err
		}
		prog.Versions = append(prog.Versions, v)
	}
	if err = p.expect("}"); err != nil {
		return prog, err
	}
	if err = p.expect("="); err != nil {
		return prog, err
	}
	if prog.Num, err = p.value(); err != nil {
		return prog, err
	}
	return prog, p.expect(";")
}

// parseNumber parses an XDR constant: decimal, hex (0x) or octal (leading 0).
func parseNumber(s string) (int64, bool) {
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		u, err2 := strconv.ParseUint(s, 0, 64)
		if err2 != nil {
			return 0, false
		}
		return int64(u), true
	}
	return v, true
}
