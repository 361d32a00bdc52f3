; C++ only (with c.scm).
(function_definition declarator: (function_declarator declarator: (field_identifier) @name)) @function
(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier scope: (_) @receiver name: (identifier) @name))) @method
(function_definition
  declarator: (reference_declarator
    (function_declarator declarator: (qualified_identifier scope: (_) @receiver name: (identifier) @name)))) @method
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: (qualified_identifier scope: (_) @receiver name: (identifier) @name)))) @method
(class_specifier name: (_) @name body: (_)) @class
(base_class_clause [(type_identifier) (qualified_identifier) (template_type)] @inherit)
(new_expression type: (_) @call)
