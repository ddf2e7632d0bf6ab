import Foundation
import HTTPServer
import WebService

/// Routes that echo what a call sent: the verbs, the bodies, the header fields.
struct EchoService: WebService {
    let path = "/echo"
    let description = "Echoes what the client sent."

    struct Upload: Codable, Equatable {
        var label: String
        var filename: String?
        var contentType: String?
        var size: Int
        /// The first bytes of the file, as text.
        var head: String
        /// The sum of the file's bytes, to check all of them arrived.
        var checksum: Int
    }

    struct Item: Codable, Equatable {
        var id: Int
        var name: String
        var tags: [String]
    }

    struct Echo: Codable, Equatable {
        var method: String
        var id: Int
        var name: String?
    }

    /// The user name of a basic `Authorization` ("anonymous" without one),
    /// never the credentials themselves.
    private static func whoami(_ request: HTTPRequest, varying: Bool) -> HTTPResponse {
        var name = "anonymous"
        if let value = request.headers["Authorization"], value.hasPrefix("Basic "),
            let decoded = Data(base64Encoded: String(value.dropFirst(6))),
            let user = String(decoding: decoded, as: UTF8.self).split(separator: ":").first
        {
            name = String(user)
        }
        var response = HTTPResponse(status: .ok, json: Array("\"\(name)\"".utf8))
        response.headers["Cache-Control"] = "private, max-age=60"
        if varying { response.headers["Vary"] = "Authorization" }
        return response
    }

    var routes: [Route] {
        Route(
            .post, "/upload", description: "Reads an uploaded file.", returns: Upload.self,
            Parameter<String>("label"), Parameter<UploadedFile>("file")
        ) { label, file in
            let handle = try FileHandle(forReadingFrom: URL(filePath: file.path))
            defer { try? handle.close() }
            var checksum = 0
            var head = ""
            while let block = try handle.read(upToCount: 1 << 16), !block.isEmpty {
                if head.isEmpty { head = String(decoding: block.prefix(16), as: UTF8.self) }
                for byte in block { checksum &+= Int(byte) }
            }
            return Upload(
                label: label, filename: file.filename, contentType: file.contentType, size: file.size,
                head: head, checksum: checksum)
        }
        Route(
            .post, "/form", description: "Sums a form's values.",
            Parameter<String>("name"), Parameter<[Int]>("values")
        ) { name, values in
            "\(name): \(values.reduce(0, +))"
        }
        Route(
            .post, "/items", description: "Echoes a JSON body.", returns: Item.self,
            Body<Item>(description: "The item.")
        ) { item in item }
        Route(.put, "/items/?:id", Parameter<Int>("id"), Parameter<String>("name")) { id, name in
            Echo(method: "PUT", id: id, name: name)
        }
        Route(.patch, "/items/?:id", Parameter<Int>("id"), Parameter<String>("name")) { id, name in
            Echo(method: "PATCH", id: id, name: name)
        }
        Route(.delete, "/items/?:id", Parameter<Int>("id")) { id in Echo(method: "DELETE", id: id, name: nil) }
        Route(.get, "/headers", description: "The header fields the call carried.", Request()) { request in
            var fields: [String: String] = [:]
            for name in ["Authorization", "X-Client", "X-Call", "Accept"] {
                if let value = request.headers[name] { fields[name] = value }
            }
            return fields
        }
        Route(.get, "/varied", description: "Answers `X-Client`, varying on it, fresh for a minute.", Request()) { request in
            var response = HTTPResponse(status: .ok, json: Array("\"\(request.headers["X-Client"] ?? "none")\"".utf8))
            response.headers["Vary"] = "X-Client"
            response.headers["Cache-Control"] = "max-age=60"
            return response
        }
        Route(.get, "/whoami", description: "The basic user's name: private, fresh for a minute, without `Vary`.", Request()) { request in
            Self.whoami(request, varying: false)
        }
        Route(.get, "/whoami/varied", description: "As `/whoami`, varying on `Authorization`.", Request()) { request in
            Self.whoami(request, varying: true)
        }
        Route(.get, "/slow", description: "Answers after `seconds`.", Parameter<Double>("seconds")) { seconds async in
            try? await Task.sleep(for: .seconds(seconds))
            return "late"
        }
    }
}
