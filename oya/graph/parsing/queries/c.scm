; C, and the base of C++ (capture names: oya/graph/parsing/tags.py).
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @function
(function_definition
  declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @function
(function_definition
  declarator: (pointer_declarator
    declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))) @function
(struct_specifier name: (_) @name body: (_)) @class
(union_specifier name: (_) @name body: (_)) @class
(enum_specifier name: (_) @name body: (_)) @class
(type_definition declarator: (type_identifier) @name) @class
(call_expression function: (_) @call)
(preproc_include path: (_) @import)
