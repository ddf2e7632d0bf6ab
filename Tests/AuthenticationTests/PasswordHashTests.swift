@testable import Authentication
import Testing

@Suite("Password hashes and the primitives under them")
struct PasswordHashTests {
    @Test("PBKDF2-HMAC-SHA-256 gives the published vector (RFC 7914, section 11)")
    func pbkdf2Vector() {
        let key = LibCrypto.pbkdf2SHA256(password: Array("password".utf8), salt: Array("salt".utf8), iterations: 1, length: 32)
        #expect(
            key.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
                == "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b")
    }

    @Test("a hash written by passlib (Python's hashlib, here) is read and checked")
    func passlibHash() throws {
        let hash = try #require(PasswordHash("$pbkdf2-sha256$29000$AAECAwQFBgcICQoLDA0ODw$ZvLORN3Wu1.2s6Mb0kBKZ43bylSsC/t0Vz5rE9nJPNg"))
        #expect(hash.iterations == 29000)
        #expect(hash.verifies(password: "correct horse"))
        #expect(!hash.verifies(password: "correct horse "))
        #expect(hash.description == "$pbkdf2-sha256$29000$AAECAwQFBgcICQoLDA0ODw$ZvLORN3Wu1.2s6Mb0kBKZ43bylSsC/t0Vz5rE9nJPNg")
    }

    @Test("a new hash has its own salt, and reads back")
    func newHash() throws {
        let first = try #require(PasswordHash.make(password: "pässword", iterations: 1000))
        let second = try #require(PasswordHash.make(password: "pässword", iterations: 1000))
        #expect(
            PasswordHash.make(password: "pässword", iterations: 0) == nil, "a count outside 1...maximumIterations is refused, not trapped")
        #expect(first != second)
        let read = try #require(PasswordHash(first.description))
        #expect(read.verifies(password: "pässword"))
        #expect(!read.verifies(password: "password"))
    }

    @Test(arguments: [
        "", "$pbkdf2-sha256$", "$pbkdf2-sha1$1000$AAECAwQFBgcICQoLDA0ODw$ZvLORN3Wu1.2s6Mb0kBKZ43bylSsC/t0Vz5rE9nJPNg",
        "$pbkdf2-sha256$0$AAECAwQFBgcICQoLDA0ODw$ZvLORN3Wu1.2s6Mb0kBKZ43bylSsC/t0Vz5rE9nJPNg",
        "$pbkdf2-sha256$1000$AAECAwQFBgcICQoLDA0ODw$short", "$pbkdf2-sha256$1000$!!$ZvLORN3Wu1.2s6Mb0kBKZ43bylSsC/t0Vz5rE9nJPNg",
        "plain text",
    ])
    func notAHash(text: String) {
        #expect(PasswordHash(text) == nil)
    }

    @Test("base64 in the three alphabets, with and without padding")
    func base64() {
        #expect(Base64.decode(Array("aGk/Pz8+".utf8), .standard) == Array("hi???>".utf8))
        #expect(Base64.decode(Array("aGk_Pz8-".utf8), .url) == Array("hi???>".utf8))
        #expect(Base64.decode(Array("YQ==".utf8), .standard) == Array("a".utf8))
        #expect(Base64.decode(Array("YQ".utf8), .url) == Array("a".utf8))
        #expect(Base64.decode(Array("Y".utf8), .url) == nil)
        #expect(Base64.decode(Array("a+b".utf8), .url) == nil)
        #expect(Base64.decode(Array("YQ==YQ".utf8), .standard) == nil)
        for length in 0..<8 {
            let bytes = (0..<length).map { UInt8(($0 * 37 + 250) & 0xFF) }
            for alphabet in [Base64.Alphabet.standard, .url, .passlib] {
                #expect(Base64.decode(Array(Base64.encode(bytes, alphabet).utf8), alphabet) == bytes)
            }
        }
    }

    @Test("the password and role files: name:value lines, comments, and errors that name the line")
    func credentialFile() throws {
        let file = try CredentialFile(text: "# users\n\nalice:$pbkdf2-sha256$x\r\nbob:payroll:extra\n", name: "passwords")
        #expect(file.entries == ["alice": "$pbkdf2-sha256$x", "bob": "payroll:extra"])
        #expect(throws: CredentialFile.InvalidFile.self) { try CredentialFile(text: "alice\n", name: "f") }
        #expect(throws: CredentialFile.InvalidFile.self) { try CredentialFile(text: "a:1\na:2\n", name: "f") }
        #expect(throws: CredentialFile.InvalidFile.self) { try CredentialFile(path: "/nonexistent/file") }
    }
}
