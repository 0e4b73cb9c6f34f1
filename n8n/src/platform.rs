//! The platform a bridge program runs on, in Node.js's terms
//! (`<process.platform>-<process.arch>`, e.g. `linux-x64`), read from the
//! program file itself, so that a package can carry programs built
//! elsewhere and each n8n host runs the one made for it.

use std::path::Path;

use object::Endianness;
use object::elf::{FileHeader32, FileHeader64};
use object::read::elf::{FileHeader, ProgramHeader};
use object::{Architecture, Object, ReadCache};

use super::PackageError;
use nodekit_core::error::{Error, Result, quoted};

/// What a program file is built for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramFile {
    /// Node.js's name of its platform, e.g. `linux-x64`.
    pub platform: String,
    /// Whether it needs a dynamic loader (and so the host's C library) to
    /// start; a statically linked Linux program starts on any Linux of its
    /// architecture.
    pub dynamic: bool,
}

/// Reads what `path` is built for. An error names a file that is not a
/// program of a platform Node.js runs on.
pub fn read(path: &Path) -> Result<ProgramFile> {
    let what = |why: String| {
        format!(
            "{} is not a program nodekit can package: {why}",
            quoted(&path.display().to_string())
        )
    };
    let not_a_program = |why: String| Error::from(PackageError::new(what(why)));
    let file = std::fs::File::open(path)
        .map_err(|e| Error::from(PackageError::io(what(e.to_string()), e)))?;
    let data = ReadCache::new(file);
    let parsed = object::File::parse(&data).map_err(|e| not_a_program(e.to_string()))?;
    let (os, dynamic) = match &parsed {
        object::File::Elf32(elf) => (
            "linux",
            has_interpreter::<Elf32>(elf.endian(), elf.elf_program_headers()),
        ),
        object::File::Elf64(elf) => (
            "linux",
            has_interpreter::<Elf64>(elf.endian(), elf.elf_program_headers()),
        ),
        object::File::MachO32(_) | object::File::MachO64(_) => ("darwin", true),
        object::File::Pe32(_) | object::File::Pe64(_) => ("win32", true),
        _ => {
            return Err(not_a_program(
                "it is not an ELF, Mach-O or PE executable".into(),
            ));
        }
    };
    let arch = node_arch(parsed.architecture()).ok_or_else(|| {
        not_a_program(format!(
            "Node.js runs on no {:?} processor",
            parsed.architecture()
        ))
    })?;
    Ok(ProgramFile {
        platform: format!("{os}-{arch}"),
        dynamic,
    })
}

/// Whether an ELF file names a program interpreter (`PT_INTERP`): the
/// dynamic loader of the C library it was linked against.
fn has_interpreter<Elf: FileHeader>(endian: Elf::Endian, headers: &[Elf::ProgramHeader]) -> bool {
    headers
        .iter()
        .any(|h| h.p_type(endian) == object::elf::PT_INTERP)
}

type Elf32 = FileHeader32<Endianness>;
type Elf64 = FileHeader64<Endianness>;

/// Node.js's `process.arch` for a processor.
fn node_arch(arch: Architecture) -> Option<&'static str> {
    Some(match arch {
        Architecture::X86_64 => "x64",
        Architecture::Aarch64 => "arm64",
        Architecture::Arm => "arm",
        Architecture::I386 => "ia32",
        Architecture::Riscv64 => "riscv64",
        Architecture::PowerPc64 => "ppc64",
        Architecture::S390x => "s390x",
        Architecture::LoongArch64 => "loong64",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn this_test_program_is_read_as_the_host_platform() {
        let program = read(&std::env::current_exe().unwrap()).unwrap();
        let arch = match std::env::consts::ARCH {
            "x86_64" => "x64",
            "aarch64" => "arm64",
            other => other,
        };
        assert_eq!(program.platform, format!("linux-{arch}"));
    }

    #[test]
    fn a_file_that_is_no_program_is_refused_naming_it() {
        let path = nodekit_test_support::scratch_dir()
            .join(format!("nodekit-not-a-program-{}", std::process::id()));
        std::fs::write(&path, "#!/bin/sh\necho hi\n").unwrap();
        let e = read(&path).unwrap_err().to_string();
        std::fs::remove_file(&path).unwrap();
        assert!(
            e.contains("nodekit-not-a-program") && e.contains("not a program"),
            "{e}"
        );
    }
}
