//! `open_struct!`: JSON objects with known members plus a catch-all for the rest.
//!
//! serde's `#[serde(flatten)]` (and untagged / internally tagged enums) buffer every
//! object into an intermediate `Content` tree before decoding it, which costs a large
//! share of the CPU of decoding a `tools/list` result. This macro generates, for a
//! struct of named known members plus an `extra` map, a hand-written single-pass
//! `Deserialize` (a map visitor: known keys decoded straight into their fields,
//! unknown keys into `extra`) and a `Serialize` that writes the known members in
//! declaration order followed by `extra`.
//!
//! Field kinds:
//! - `req`: required member of type `T` (missing → `missing_field` error);
//! - `text`: required `String` member that may be long (a text result, a
//!   resource's text): decoded with one allocation of its final size (see
//!   `text_seed`); `opttext`: the same, optional (as `opt`);
//! - `opt`: optional member, field type `Option<T>`; absent or `null` reads as
//!   `None`, `None` is not written;
//! - `list`: required array member, field type `Vec<T>` as declared, decoded
//!   into a vector that starts with room for one element (serde's default of
//!   four large elements is a "large" allocation for glibc's malloc, which then
//!   consolidates its free lists: measurable on every `tools/call` result);
//! - `present`: optional member, field type `Option<T>`, where `T` itself decodes
//!   `null` (see [`crate::Nullable`]): only absence reads as `None`.
//!
//! An optional leading `@tag "type" = "text";` declares a constant discriminator
//! member: it is written first, and on reading it must have that value. A `schema;`
//! prefix also derives `schemars::JsonSchema` with the wire names.
//!
//! Duplicate members: the last one wins (like `serde_json::Value`).

/// Field type for a kind.
macro_rules! field_ty {
    (req $t:ty) => { $t };
    (text $t:ty) => { $t };
    (opttext $t:ty) => { ::core::option::Option<$t> };
    (list $t:ty) => { $t };
    (opt $t:ty) => { ::core::option::Option<$t> };
    (present $t:ty) => { ::core::option::Option<$t> };
}

/// Reads one member's value into its slot.
macro_rules! read_field {
    (req $map:ident $slot:ident $t:ty) => {
        $slot = ::core::option::Option::Some($map.next_value::<$t>()?)
    };
    (text $map:ident $slot:ident $t:ty) => {
        $slot = ::core::option::Option::Some($map.next_value_seed($crate::text_seed::TextSeed)?)
    };
    (opttext $map:ident $slot:ident $t:ty) => {
        $slot = $map.next_value_seed($crate::text_seed::OptTextSeed)?
    };
    (list $map:ident $slot:ident $t:ty) => {
        $slot = ::core::option::Option::Some($map.next_value_seed(
            $crate::open_struct::ListSeed::<$t>(::core::marker::PhantomData),
        )?)
    };
    (opt $map:ident $slot:ident $t:ty) => {
        $slot = $map.next_value::<::core::option::Option<$t>>()?
    };
    (present $map:ident $slot:ident $t:ty) => {
        $slot = ::core::option::Option::Some($map.next_value::<$t>()?)
    };
}

/// Turns a slot into the field value once the map is exhausted.
macro_rules! finish_field {
    (list $slot:ident $wire:literal $err:ty) => {
        $crate::open_struct::finish_field!(req $slot $wire $err)
    };
    (text $slot:ident $wire:literal $err:ty) => {
        $crate::open_struct::finish_field!(req $slot $wire $err)
    };
    (opttext $slot:ident $wire:literal $err:ty) => {
        $slot
    };
    (req $slot:ident $wire:literal $err:ty) => {
        match $slot {
            ::core::option::Option::Some(v) => v,
            ::core::option::Option::None => {
                return ::core::result::Result::Err(<$err as ::serde::de::Error>::missing_field(
                    $wire,
                ));
            }
        }
    };
    (opt $slot:ident $wire:literal $err:ty) => {
        $slot
    };
    (present $slot:ident $wire:literal $err:ty) => {
        $slot
    };
}

/// Writes one member (optional ones only when present).
macro_rules! write_field {
    (req $m:ident $wire:literal $v:expr) => {
        ::serde::ser::SerializeMap::serialize_entry(&mut $m, $wire, $v)?
    };
    (list $m:ident $wire:literal $v:expr) => {
        ::serde::ser::SerializeMap::serialize_entry(&mut $m, $wire, $v)?
    };
    (text $m:ident $wire:literal $v:expr) => {
        ::serde::ser::SerializeMap::serialize_entry(&mut $m, $wire, $v)?
    };
    (opttext $m:ident $wire:literal $v:expr) => {
        $crate::open_struct::write_field!(opt $m $wire $v)
    };
    (opt $m:ident $wire:literal $v:expr) => {
        if let ::core::option::Option::Some(v) = $v {
            ::serde::ser::SerializeMap::serialize_entry(&mut $m, $wire, v)?
        }
    };
    (present $m:ident $wire:literal $v:expr) => {
        if let ::core::option::Option::Some(v) = $v {
            ::serde::ser::SerializeMap::serialize_entry(&mut $m, $wire, v)?
        }
    };
}

/// The `Serialize` / `Deserialize` impls shared by both forms of `open_struct!`.
macro_rules! open_struct_impls {
    (
        $name:ident [$($tag_key:literal = $tag_val:literal)?]
        $( $kind:ident $field:ident : $ty:ty = $wire:literal ),*
    ) => {
        impl $name {
            /// Wire names this struct decodes itself; everything else goes to `extra`.
            #[allow(dead_code)]
            pub(crate) const KNOWN_MEMBERS: &'static [&'static str] = &[$($wire,)* $($tag_key)?];

            /// Decodes the members of an object whose map access is already open (the
            /// discriminator, if any, may already have been consumed by the caller).
            #[allow(dead_code, unused_mut, non_snake_case)]
            pub(crate) fn visit_members<'de, A>(mut map: A) -> ::core::result::Result<Self, A::Error>
            where
                A: ::serde::de::MapAccess<'de>,
            {
                #[allow(non_camel_case_types, dead_code)]
                enum Member {
                    $($field,)*
                    Tag,
                    Other(::std::string::String),
                }
                struct MemberVisitor;
                impl<'de> ::serde::de::Visitor<'de> for MemberVisitor {
                    type Value = Member;
                    fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        f.write_str("a member name")
                    }
                    fn visit_str<E: ::serde::de::Error>(self, v: &str) -> ::core::result::Result<Member, E> {
                        ::core::result::Result::Ok(match v {
                            $($wire => Member::$field,)*
                            $($tag_key => Member::Tag,)?
                            _ => Member::Other(v.to_owned()),
                        })
                    }
                    fn visit_string<E: ::serde::de::Error>(self, v: ::std::string::String) -> ::core::result::Result<Member, E> {
                        ::core::result::Result::Ok(match v.as_str() {
                            $($wire => Member::$field,)*
                            $($tag_key => Member::Tag,)?
                            _ => Member::Other(v),
                        })
                    }
                }
                impl<'de> ::serde::Deserialize<'de> for Member {
                    fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::core::result::Result<Self, D::Error> {
                        d.deserialize_identifier(MemberVisitor)
                    }
                }

                $( let mut $field: ::core::option::Option<$ty> = ::core::option::Option::None; )*
                let mut extra = ::serde_json::Map::new();
                while let ::core::option::Option::Some(key) = map.next_key::<Member>()? {
                    match key {
                        $( Member::$field => $crate::open_struct::read_field!($kind map $field $ty), )*
                        Member::Tag => {
                            $( map.next_value_seed($crate::open_struct::ExpectTag { key: $tag_key, value: $tag_val })?; )?
                        }
                        Member::Other(k) => {
                            let v: ::serde_json::Value = map.next_value()?;
                            extra.insert(k, v);
                        }
                    }
                }
                ::core::result::Result::Ok($name {
                    $( $field: $crate::open_struct::finish_field!($kind $field $wire A::Error), )*
                    extra,
                })
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::core::result::Result<Self, D::Error> {
                struct ObjectVisitor;
                impl<'de> ::serde::de::Visitor<'de> for ObjectVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        f.write_str(concat!("a ", stringify!($name), " object"))
                    }
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(self, map: A) -> ::core::result::Result<$name, A::Error> {
                        $name::visit_members(map)
                    }
                }
                d.deserialize_map(ObjectVisitor)
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::core::result::Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(::core::option::Option::None)?;
                $( ::serde::ser::SerializeMap::serialize_entry(&mut m, $tag_key, $tag_val)?; )?
                $( $crate::open_struct::write_field!($kind m $wire &self.$field); )*
                for (k, v) in &self.extra {
                    // A caller may have put a known member's name into `extra`; the
                    // typed field wins so the object never has a duplicate key.
                    if !Self::KNOWN_MEMBERS.contains(&k.as_str()) {
                        ::serde::ser::SerializeMap::serialize_entry(&mut m, k, v)?;
                    }
                }
                ::serde::ser::SerializeMap::end(m)
            }
        }
    };
}

/// Declares an open struct: known members plus `extra`, with hand-written serde impls.
macro_rules! open_struct {
    (
        schema;
        $(#[$outer:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$fattr:meta])*
                $kind:ident $field:ident : $ty:ty = $wire:literal
            ),* $(,)?
        }
    ) => {
        $(#[$outer])*
        #[derive(::schemars::JsonSchema)]
        $vis struct $name {
            $(
                $(#[$fattr])*
                #[schemars(rename = $wire)]
                $vis $field: $crate::open_struct::field_ty!($kind $ty),
            )*
            /// Members this crate does not know, kept as sent and written back unchanged.
            #[schemars(skip)]
            $vis extra: $crate::JsonObject,
        }
        $crate::open_struct::open_struct_impls! { $name [] $( $kind $field : $ty = $wire ),* }
    };
    (
        $(#[$outer:meta])*
        $vis:vis struct $name:ident {
            $(@tag $tag_key:literal = $tag_val:literal;)?
            $(
                $(#[$fattr:meta])*
                $kind:ident $field:ident : $ty:ty = $wire:literal
            ),* $(,)?
        }
    ) => {
        $(#[$outer])*
        $vis struct $name {
            $(
                $(#[$fattr])*
                $vis $field: $crate::open_struct::field_ty!($kind $ty),
            )*
            /// Members this crate does not know, kept as sent and written back unchanged.
            $vis extra: $crate::JsonObject,
        }
        $crate::open_struct::open_struct_impls! { $name [$($tag_key = $tag_val)?] $( $kind $field : $ty = $wire ),* }
    };
}

/// Declares a string enum whose unknown values are kept (`Unknown(String)`) rather
/// than failing the whole message: for values a server chooses and the spec may grow.
macro_rules! open_enum {
    (
        $(#[$outer:meta])*
        pub enum $name:ident {
            $( $(#[$vattr:meta])* $variant:ident = $wire:literal ),* $(,)?
        }
    ) => {
        $(#[$outer])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vattr])* $variant, )*
            /// A value this crate does not know, kept as sent.
            Unknown(::std::string::String),
        }

        impl $name {
            /// The value as it appears on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $wire, )*
                    $name::Unknown(s) => s.as_str(),
                }
            }

            /// The variant for a wire value (unknown values are kept).
            pub fn from_wire(s: &str) -> Self {
                match s {
                    $( $wire => $name::$variant, )*
                    other => $name::Unknown(other.to_owned()),
                }
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> ::core::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> ::core::result::Result<Self, D::Error> {
                struct EnumVisitor;
                impl<'de> ::serde::de::Visitor<'de> for EnumVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                        f.write_str("a string")
                    }
                    fn visit_str<E: ::serde::de::Error>(self, v: &str) -> ::core::result::Result<$name, E> {
                        ::core::result::Result::Ok($name::from_wire(v))
                    }
                }
                d.deserialize_str(EnumVisitor)
            }
        }

        impl ::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                ::schemars::json_schema!({ "type": "string", "enum": [ $($wire),* ] })
            }
        }
    };
}

pub(crate) use {
    field_ty, finish_field, open_enum, open_struct, open_struct_impls, read_field, write_field,
};

/// Seed that decodes a JSON array into a `Vec` that starts small (see the
/// `list` field kind).
pub(crate) struct ListSeed<V>(pub(crate) std::marker::PhantomData<V>);

impl<'de, T: serde::Deserialize<'de>> serde::de::DeserializeSeed<'de> for ListSeed<Vec<T>> {
    type Value = Vec<T>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Vec<T>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for ListSeed<Vec<T>> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        // A size hint (rare from JSON) is trusted only up to a small bound.
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(1).clamp(1, 64));
        while let Some(item) = seq.next_element()? {
            out.push(item);
        }
        Ok(out)
    }
}

/// Seed that checks a discriminator member has its expected string value, without
/// allocating.
pub(crate) struct ExpectTag {
    pub(crate) key: &'static str,
    pub(crate) value: &'static str,
}

impl<'de> serde::de::DeserializeSeed<'de> for ExpectTag {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for ExpectTag {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "\"{}\": \"{}\"", self.key, self.value)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        if v == self.value {
            Ok(())
        } else {
            Err(E::invalid_value(
                serde::de::Unexpected::Other("another discriminator"),
                &self,
            ))
        }
    }
}
