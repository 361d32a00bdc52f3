; Ruby (capture names: oya/graph/parsing/tags.py).
(class name: (_) @name) @class
(module name: (_) @name) @class
(method name: (_) @name) @method
(singleton_method name: (_) @name) @method
(class superclass: (superclass (_) @inherit))
(call
  method: (identifier) @_mixin
  arguments: (argument_list [(constant) (scope_resolution)] @inherit)
  (#any-of? @_mixin "include" "extend" "prepend"))
(call
  method: (identifier) @_require
  arguments: (argument_list . (string (string_content) @import.relative))
  (#eq? @_require "require_relative"))
(call
  method: (identifier) @_require
  arguments: (argument_list . (string (string_content) @import))
  (#eq? @_require "require"))
(call
  receiver: (_)? @call.object
  method: (_) @call
  (#not-any-of? @call "require" "require_relative" "include" "extend" "prepend"))
