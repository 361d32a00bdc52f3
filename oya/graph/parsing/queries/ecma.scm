; JavaScript and TypeScript share these patterns (see oya/graph/parsing/tags.py for the capture names).
(class_declaration name: (_) @name) @class
(class name: (_) @name) @class
(function_declaration name: (identifier) @name) @function
(generator_function_declaration name: (identifier) @name) @function
(method_definition name: (_) @name) @method
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression)]) @function
(call_expression function: (_) @call)
(new_expression constructor: (_) @call)
(import_statement
  (import_clause (identifier) @import.alias)
  source: (string (string_fragment) @import))
(import_statement
  (import_clause (namespace_import (identifier) @import.alias))
  source: (string (string_fragment) @import))
(import_statement
  (import_clause (named_imports (import_specifier name: (_) @import.name alias: (_)? @import.alias)))
  source: (string (string_fragment) @import))
(import_statement source: (string (string_fragment) @import))
(export_statement source: (string (string_fragment) @import))
(variable_declarator
  name: (identifier) @import.alias
  value: (call_expression
    function: (identifier) @_require
    arguments: (arguments . (string (string_fragment) @import)))
  (#eq? @_require "require"))
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @import))
  (#eq? @_require "require"))
; `obj.name = function () {}` (a method of obj), `Cls.prototype.name = ...`, `exports.name = ...`
(assignment_expression
  left: (member_expression object: (identifier) @receiver property: (property_identifier) @name)
  right: [(function_expression) (arrow_function)]
  (#not-any-of? @receiver "exports" "module")) @method
(assignment_expression
  left: (member_expression
    object: (member_expression object: (identifier) @receiver property: (property_identifier) @_prototype)
    property: (property_identifier) @name)
  right: [(function_expression) (arrow_function)]
  (#eq? @_prototype "prototype")) @method
(assignment_expression
  left: (member_expression object: (identifier) @_exports property: (property_identifier) @name)
  right: [(function_expression) (arrow_function)]
  (#any-of? @_exports "exports" "module")) @function
